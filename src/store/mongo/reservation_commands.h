// The MongoDB commands of the reservation store (seed 000), each built by a pure function: inputs
// in, the command's filter and update out, so each is tested for what it contains without a
// server (tests/mongo/reservation_commands_test.cc). MongoReservationStore sends them.
//
// One collection per aggregate type, "wow_reservation__<context>__<aggregate>"; one document per
// key:
//   {_id: {t: tenant, n: namespace, k: key}, tenant_id: tenant, key: key,
//    owner: {tenant_id, id}, expires_at: ms | null, holds: [attempt, ...], version: v | null}
// A null expires_at marks a confirmed reservation (at `version`); a pending one expires at that
// epoch millisecond, held by `holds`, with a null version. Every filter names the _id and the
// shard key's two fields (tenant_id, key), so on a sharded cluster it routes to one shard.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "store/mongo/bson_doc.h"
#include "store/mongo/executor.h"
#include "wow/model.h"
#include "wow/reservation_store.h"

namespace wow::mongo {

// The layout's format, recorded with each collection (docs/MONGODB.md).
inline constexpr int kReservationFormat = 1;

// "wow_reservation__<context>__<aggregate>".
std::string ReservationCollection(const ReservationScope& scope);

// The shard key of a reservation collection: {tenant_id: 1, key: "hashed"}.
Bson ReservationShardKey();

// Reserve and Confirm: conditional upserts whose filter admits only the owner's reservation or an
// expired pending one (a null expiry never passes $lte), with a pipeline update that applies the
// rules of wow/reservation_store.h to what it matched (or to the new document the upsert seeds
// with the filter's _id, tenant_id and key). A unique-key error means another owner's live or
// confirmed reservation was there, or a concurrent insert won: read it, then decide.
UpdateCommand ReserveCommand(const ReservationScope& scope, const std::string& key,
                             const AggregateRef& owner, const std::string& hold,
                             std::chrono::milliseconds ttl, EpochMillis now);
UpdateCommand ConfirmCommand(const ReservationScope& scope, const std::string& key,
                             const AggregateRef& owner, Version version, EpochMillis now);

// Release: one conditional delete of the owner's expired pending reservation or its reservation
// confirmed at `version` or below; at kAnyVersion, of whatever reservation the owner has.
DeleteCommand ReleaseCommand(const ReservationScope& scope, const std::string& key,
                             const AggregateRef& owner, Version version, EpochMillis now);

// Abandon, in two writes: pull `hold` from the owner's pending reservation, then delete it only
// while it is pending, the owner's and without holds (a hold added between the two keeps it).
UpdateCommand AbandonPullCommand(const ReservationScope& scope, const std::string& key,
                                 const AggregateRef& owner, const std::string& hold);
DeleteCommand AbandonDeleteCommand(const ReservationScope& scope, const std::string& key,
                                   const AggregateRef& owner);

// Find: the key's document. List: up to `limit` documents of the scope after `after_key`, in key
// order (the _id index's order: the scope's tenant and namespace are its leading fields).
FindCommand FindReservationCommand(const ReservationScope& scope, const std::string& key);
FindCommand ListReservationsCommand(const ReservationScope& scope, const std::string& after_key,
                                    int limit);

// The reservation a stored document says. Throws Error(kDataLoss) naming the collection and the
// document when it is not of the layout.
Reservation ParseReservation(const ReservationScope& scope, const bson_t& doc);

}  // namespace wow::mongo
