#include "store/sqlite/stream_checksum.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

namespace wow::sqlite {
namespace {

void AddInt(XXH3_state_t* state, std::int64_t value) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(value) >> (8 * i));
  }
  XXH3_64bits_update(state, bytes, sizeof bytes);
}

void AddBytes(XXH3_state_t* state, std::string_view bytes) {
  AddInt(state, static_cast<std::int64_t>(bytes.size()));
  XXH3_64bits_update(state, bytes.data(), bytes.size());
}

std::string_view BytesOf(sqlite3_value* value) {
  const auto* data = static_cast<const char*>(sqlite3_value_blob(value));
  return {data == nullptr ? "" : data, static_cast<size_t>(sqlite3_value_bytes(value))};
}

void ChecksumFunction(sqlite3_context* context, int argc, sqlite3_value** argv) {
  if (argc != 9) {
    sqlite3_result_error(context, "wow_stream_checksum takes 9 arguments", -1);
    return;
  }
  StoredStream row;
  row.position = sqlite3_value_int64(argv[0]);
  row.tenant_id = BytesOf(argv[1]);
  row.aggregate_id = BytesOf(argv[2]);
  row.version = sqlite3_value_int64(argv[3]);
  row.request_id = BytesOf(argv[4]);
  row.time = sqlite3_value_int64(argv[5]);
  row.events = BytesOf(argv[6]);
  if (sqlite3_value_type(argv[7]) != SQLITE_NULL) row.facts = BytesOf(argv[7]);
  row.transport = BytesOf(argv[8]);
  sqlite3_result_int64(context, StreamChecksum(row));
}

}  // namespace

std::int64_t StreamChecksum(const StoredStream& row) {
  XXH3_state_t storage;
  XXH3_INITSTATE(&storage);
  XXH3_state_t* state = &storage;
  XXH3_64bits_reset(state);
  AddInt(state, row.position);
  AddBytes(state, row.tenant_id);
  AddBytes(state, row.aggregate_id);
  AddInt(state, row.version);
  AddBytes(state, row.request_id);
  AddInt(state, row.time);
  AddBytes(state, row.events);
  AddInt(state, row.facts ? 1 : 0);
  if (row.facts) AddBytes(state, *row.facts);
  AddBytes(state, row.transport);
  return static_cast<std::int64_t>(XXH3_64bits_digest(state));
}

StoredStream ReadStoredStream(const Query& q, std::optional<std::int64_t>& stored_checksum) {
  StoredStream row;
  row.position = q.Int(0);
  row.tenant_id = q.TextView(1);
  row.aggregate_id = q.TextView(2);
  row.version = q.Int(3);
  row.request_id = q.TextView(4);
  row.time = q.Int(5);
  row.events = q.TextView(6);
  if (!q.IsNull(7)) row.facts = q.TextView(7);
  row.transport = q.TextView(8);
  stored_checksum.reset();
  if (!q.IsNull(9)) stored_checksum = q.Int(9);
  return row;
}

void RegisterStreamChecksum(Connection& connection) {
  connection.Check(
      sqlite3_create_function_v2(connection.handle(), "wow_stream_checksum", 9,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, &ChecksumFunction,
                                 nullptr, nullptr, nullptr),
      "registering wow_stream_checksum");
}

}  // namespace wow::sqlite
