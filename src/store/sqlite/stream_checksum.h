// The checksum of a stream as the log tables store it (private): XXH3-64 over a row's columns,
// each length-prefixed, so a changed bit in any of them (the position, the aggregate's tenant and
// id, the version, the request id, the time, the events, the facts, the transport) changes it.
// Format 4 keeps it in each log row's `checksum` column; every read of a stream checks it, and so
// does CheckSqliteDatabase (wow/sqlite_check.h).
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "store/sqlite/connection.h"

namespace wow::sqlite {

// A log row's columns as stored (facts absent when the column is NULL).
struct StoredStream {
  std::int64_t position = 0;
  std::string_view tenant_id;
  std::string_view aggregate_id;
  std::int64_t version = 0;
  std::string_view request_id;
  std::int64_t time = 0;
  std::string_view events;
  std::optional<std::string_view> facts;
  std::string_view transport;
};

// The checksum of `row`, as the `checksum` column keeps it (the 64 bits as a signed integer).
std::int64_t StreamChecksum(const StoredStream& row);

// The columns a log row is selected with for ReadStoredStream, in its order.
inline constexpr const char* kStoredStreamColumns =
    "position, tenant_id, aggregate_id, version, request_id, time, events, facts, transport, "
    "checksum";

// The row `q` is on, selected as kStoredStreamColumns (valid until q's next Step), and its stored
// checksum (nullopt when the column is NULL: a row no format-4 writer wrote).
StoredStream ReadStoredStream(const Query& q, std::optional<std::int64_t>& stored_checksum);

// Registers the SQL function wow_stream_checksum(position, tenant_id, aggregate_id, version,
// request_id, time, events, facts, transport), StreamChecksum of its arguments, on `connection`
// (for the migration of a format-3 file). Throws SqliteFailure when SQLite refuses it.
void RegisterStreamChecksum(Connection& connection);

}  // namespace wow::sqlite
