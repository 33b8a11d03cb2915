// Projections: read models kept from the log. A Projection is plain functions of an entry, or of
// each event type (as AggregateType is for state), that write rows through a ReadModelWriter; the
// framework runs it as a subscription of the SubscriptionRunner (leases, checkpoints, retries):
//
//   auto brands = std::make_shared<wow::Projection>("catalog", std::vector<std::string>{"brands"});
//   brands->On<BrandCreated>([](const BrandCreated& e, const wow::Stream& s,
//                               wow::ReadModelWriter& rows) {
//     rows.Put({"brands", s.ref.tenant_id, s.ref.id, s.version, e.key, "{}"});
//   });
//   node.AddSubscription(wow::NewProjectionSubscription(brands, stores.read_models()));
//
// Each entry's writes are applied together in ReadModelStore::Apply: on a transactional store
// (SQLite) with the checkpoint, exactly once; elsewhere at least once (see wow/read_model.h for
// making handlers idempotent). A projection is rebuilt by RebuildProjection (`wow projection
// rebuild`), and its lag is ProjectionLag.
//
// Thread-safety: a Projection is configured once, before its subscription is made, then
// immutable and safe to share; its functions are called for several partitions concurrently and
// must not keep state of their own between calls.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wow/aggregate.h"
#include "wow/event_log.h"
#include "wow/read_model.h"
#include "wow/subscription.h"

namespace wow {

class StoreSet;

class Projection {
 public:
  using EntryFn = std::function<void(const Entry&, ReadModelWriter&)>;
  using EventFn = std::function<void(const nlohmann::json&, const Stream&, ReadModelWriter&)>;

  // A projection named `name` (its subscription is "projection." + name) writing rows of
  // `tables`, which a rebuild drops. REQUIRES: `name` and each table pass ValidateTypeName, and
  // there is a table (else Error(kInvalidArgument)).
  Projection(std::string_view name, std::vector<std::string> tables);

  // Calls `fn` for every entry, before the event handlers.
  Projection& OnEntry(EntryFn fn);

  // Calls `fn` for every event of type `Event` in an entry, in order, with its stream.
  template <Message Event>
  Projection& On(std::function<void(const Event&, const Stream&, ReadModelWriter&)> fn) {
    events_[std::string(Event::kType)] =
        [fn = std::move(fn)](const nlohmann::json& body, const Stream& stream,
                             ReadModelWriter& rows) { fn(body.get<Event>(), stream, rows); };
    return *this;
  }

  // Applies `entry`: the entry functions, then the function of each event whose type has one
  // (events of other types are passed over). Throws Error(kDataLoss) for an event body that is
  // not JSON; what a function throws passes through.
  void Handle(const Entry& entry, ReadModelWriter& rows) const;

  const std::string& name() const { return name_; }
  const std::string& subscription() const { return subscription_; }
  const std::vector<std::string>& tables() const { return tables_; }

 private:
  std::string name_;
  std::string subscription_;
  std::vector<std::string> tables_;
  std::vector<EntryFn> entries_;
  std::map<std::string, EventFn, std::less<>> events_;
};

// The subscription that applies `projection` to `read_models`, each entry in one
// ReadModelStore::Apply. Throws Error(kInvalidArgument) when either is null.
std::shared_ptr<Subscription> NewProjectionSubscription(
    std::shared_ptr<const Projection> projection, std::shared_ptr<ReadModelStore> read_models);

// How many entries each partition of `log` holds past the checkpoint of `subscription`
// (the head minus the checkpoint), by partition: the lag of a projection or any subscription.
std::vector<Sequence> SubscriptionLag(EventLog& log, const std::string& subscription);

// Rebuilds `projection` in `stores`: drops its rows and its checkpoints (ReadModelStore::Drop),
// then applies every entry of the log, on the calling thread, calling `progress` (when set) with
// the entries applied so far and the entries the log held at the start, after each batch.
// Returns the entries applied. REQUIRES: no node runs the projection meanwhile (its runner would
// go on from where it was). Throws Error(kFailedPrecondition), dropping nothing, when the store
// set has no read models, they cannot be dropped (memory's: the log keeps their checkpoints), or
// a partition's lease is live (a node runs its subscriptions); Error(kUnavailable) when a node
// took a lease during the replay (the rows are then partly rebuilt: rebuild again once it
// stopped); and what the log or a handler throws.
std::int64_t RebuildProjection(
    const StoreSet& stores, const std::shared_ptr<const Projection>& projection,
    const std::function<void(std::int64_t, std::int64_t)>& progress = {});

}  // namespace wow
