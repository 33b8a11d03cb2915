// The EventLog on SQLite. Every append runs in a write transaction (batched by the database's
// group commit) that checks the request id and the version, takes the partition counter's next
// sequence and inserts the stream, so each partition's sequences are gapless across processes and
// a tail never meets a missing sequence: no placeholders are ever needed. The same transaction
// applies the stream's key facts to the file's reservation tables (confirm each reserved key,
// release each released one, at the stream's version).
//
// A commit is visible before the syncer has it on disk (database.h). Until its Append returns, an
// entry this log appended is "unsynced": ReadAfter, and so every tail of this process, stops
// before it, so that a subscriber never handles an entry a power loss could take back. Another
// process's entries may be unsynced too, and this process cannot see its appends: under
// synchronous=FULL, before ReadAfter returns an entry past the last one this process knows durable
// (an append of its own acknowledged, or a sync of its own), it syncs the write-ahead log itself
// (SqliteDatabase::SyncForReaders). A process writing alone never pays for it.
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include "core/key_facts.h"
#include "core/stream_codec.h"
#include "store/common/commit_signal.h"
#include "store/sqlite/database.h"
#include "store/sqlite/reservation_rows.h"
#include "store/sqlite/stream_checksum.h"
#include "wow/error.h"
#include "wow/incidents.h"
#include "wow/sqlite.h"

namespace wow {
namespace {

using sqlite::Connection;
using sqlite::Query;
using sqlite::TableKind;

// Sets `entry` (a new one) to the row `q` is on, of `aggregate`'s table in the file `path`,
// selected as sqlite::kStoredStreamColumns, once its checksum matches (the transport kept when
// `with_transport`). Throws Error(kDataLoss) naming the stream when it does not, or when its
// events or facts cannot be decoded, and reports the damage (wow/incidents.h).
void ReadRow(const Query& q, const std::string& path, const std::string& context,
             const std::string& aggregate, bool with_transport, Entry& entry) {
  std::optional<std::int64_t> checksum;
  const sqlite::StoredStream row = sqlite::ReadStoredStream(q, checksum);
  entry.position = sqlite::KeyPosition(row.position);
  Stream& s = entry.stream;
  s.ref.context = context;
  s.ref.aggregate = aggregate;
  s.ref.tenant_id = row.tenant_id;
  s.ref.id = row.aggregate_id;
  s.version = row.version;
  auto damaged = [&](const std::string& why) {
    const std::string message = "SQLite database \"" + path + "\": the stream of " +
                                ToString(s.ref) + " at version " + std::to_string(s.version) +
                                " (partition " + std::to_string(entry.position.partition) +
                                ", sequence " + std::to_string(entry.position.sequence) + ") " +
                                why +
                                ": the file is damaged; run wow check on it, and restore it from a "
                                "backup";
    ReportDataLoss(message);
    return Error(ErrorCode::kDataLoss, message);
  };
  if (!checksum || *checksum != sqlite::StreamChecksum(row)) {
    throw damaged(checksum ? "does not match its checksum" : "has no checksum");
  }
  s.request_id = row.request_id;
  s.time = row.time;
  try {
    s.events = core::DecodeEvents(row.events);
    core::DecodeFacts(row.facts.value_or(std::string_view()), s);
  } catch (const Error& e) {
    throw damaged(std::string("cannot be decoded (") + e.what() + ")");
  }
  if (with_transport) s.transport = row.transport;
}

// A stream's columns as stored, encoded before the write transaction.
struct Encoded {
  std::string events;
  std::optional<std::string> facts;
  std::int64_t bytes = 0;  // about the row's size
};

class SqliteEventLog final : public EventLog {
 public:
  SqliteEventLog(std::shared_ptr<SqliteDatabase> db, std::string context,
                 std::shared_ptr<const Clock> clock)
      : db_(std::move(db)), context_(std::move(context)), clock_(std::move(clock)) {
    Require(db_ != nullptr, "a SQLite event log needs a database");
    Require(clock_ != nullptr, "an event log needs a clock");
    ValidateTypeName(context_, "context");
  }

  const std::string& context() const override { return context_; }

  void Create(int partitions) override {
    ValidatePartitionCount(partitions);
    std::lock_guard lock(create_mutex_);
    if (const int created = partitions_.load(); created != 0) {
      if (created == partitions) return;
      throw Error(ErrorCode::kFailedPrecondition,
                  "event log of context \"" + context_ + "\" has " + std::to_string(created) +
                      " partitions, not " + std::to_string(partitions) +
                      "; the partition count never changes");
    }
    db_->Write([&](Connection& w) {
      db_->ClaimPartitionCount(w, context_, partitions);
      for (int p = 0; p < partitions; ++p) {
        Query(w,
              "INSERT OR IGNORE INTO wow_partitions (context, partition, last_sequence, parent, "
              "epoch) VALUES (?1, ?2, 0, NULL, 0)")
            .Bind(1, context_)
            .Bind(2, p)
            .Run();
      }
    });
    signal_ = db_->Signal(context_, partitions);
    partitions_.store(partitions);
  }

  // Reads the partition count of a log whose counters exist (Create by any process); writes
  // nothing.
  int Open() override {
    const auto [recorded, counters] = db_->Read([&](Connection& r) {
      sqlite::Transaction snapshot(r, sqlite::Transaction::Kind::kRead);
      std::int64_t partitions = 0;
      {
        Query q(r, "SELECT partitions FROM wow_contexts WHERE context = ?1");
        q.Bind(1, context_);
        if (q.Step()) partitions = q.Int(0);
      }
      Query q(r, "SELECT count(*) FROM wow_partitions WHERE context = ?1");
      q.Bind(1, context_);
      const std::int64_t count = q.Step() ? q.Int(0) : 0;
      snapshot.Commit();
      return std::pair{partitions, count};
    });
    if (recorded == 0 || counters != recorded) {
      throw Error(ErrorCode::kFailedPrecondition, "event log of context \"" + context_ +
                                                      "\" was never created in SQLite database \"" +
                                                      db_->path() +
                                                      "\"; create it first (EventLog::Create)");
    }
    const int partitions = static_cast<int>(recorded);
    std::lock_guard lock(create_mutex_);
    if (const int created = partitions_.load(); created != 0) {
      if (created == partitions) return partitions;
      throw Error(ErrorCode::kFailedPrecondition,
                  "event log of context \"" + context_ + "\" has " + std::to_string(partitions) +
                      " partitions in the file, not " + std::to_string(created));
    }
    signal_ = db_->Signal(context_, partitions);
    partitions_.store(partitions);
    return partitions;
  }

  int partitions() const override { return RequireCreated(); }

  AppendResult Append(const Stream& stream) override { return AppendAll({stream}).front(); }

  std::vector<AppendResult> AppendAll(const std::vector<Stream>& streams) override {
    const int partitions = RequireCreated();
    if (streams.empty()) return {};
    // Validate and encode outside the write lock; the transaction only checks and inserts.
    std::vector<std::optional<std::string>> refusals(streams.size());
    std::vector<Encoded> encoded(streams.size());
    for (size_t i = 0; i < streams.size(); ++i) {
      refusals[i] = InvalidStreamReason(streams[i], context_);
      if (refusals[i]) continue;
      try {
        encoded[i].events = core::EncodeEvents(streams[i].events);
        encoded[i].facts = core::EncodeFacts(streams[i]);
        encoded[i].bytes = static_cast<std::int64_t>(
            encoded[i].events.size() + encoded[i].facts.value_or("").size() +
            streams[i].transport.size() + streams[i].request_id.size() + streams[i].ref.id.size() +
            streams[i].ref.tenant_id.size() + 1024);
      } catch (const Error& e) {
        refusals[i] = "stream of " + ToString(streams[i].ref) + " cannot be stored: " + e.what();
        continue;
      }
    }
    std::vector<AppendResult> results;
    UnsyncedEntries unsynced(*this);
    db_->Write(
        [&](Connection& w) {
          results.clear();
          std::set<AggregateRef> failed;  // an aggregate's later streams follow its failed one
          for (size_t i = 0; i < streams.size(); ++i) {
            if (refusals[i]) {
              results.push_back(AppendResult::Refused(*refusals[i]));
            } else {
              results.push_back(AppendLocked(w, streams[i], encoded[i], partitions,
                                             failed.contains(streams[i].ref)));
            }
            if (results.back().appended()) {
              unsynced.Add(results.back().position());
            } else {
              failed.insert(streams[i].ref);
            }
          }
        },
        static_cast<int>(streams.size()));
    unsynced.Acknowledge();  // on disk now: before the tails are woken
    std::set<int> committed;
    for (const AppendResult& result : results) {
      if (result.appended()) committed.insert(result.position().partition);
    }
    for (int partition : committed) signal_->Notify(partition);
    return results;
  }

  std::vector<Stream> Read(const AggregateRef& ref, Version from, Version to) override {
    RequireOwnRef(ref);
    std::vector<Stream> streams;
    if (from > to) return streams;
    return db_->Read([&](Connection& r) {
      const std::string table = sqlite::TableName(TableKind::kLog, context_, ref.aggregate);
      if (!db_->TableExists(r, table)) return streams;
      Query q(r, std::string("SELECT ") + sqlite::kStoredStreamColumns + " FROM " + sqlite::Quoted(table) +
                     " WHERE tenant_id = ?1 AND aggregate_id = ?2 AND version BETWEEN ?3 AND ?4 "
                     "ORDER BY version");
      q.Bind(1, ref.tenant_id).Bind(2, ref.id).Bind(3, from).Bind(4, to);
      while (q.Step()) {
        Entry entry;
        ReadRow(q, db_->path(), context_, ref.aggregate, false, entry);
        streams.push_back(std::move(entry.stream));
      }
      return streams;
    });
  }

  std::vector<Entry> ReadEntries(const AggregateRef& ref,
                                 const std::vector<Version>& versions) override {
    RequireOwnRef(ref);
    std::vector<Entry> entries;
    return db_->Read([&](Connection& r) {
      const std::string table = sqlite::TableName(TableKind::kLog, context_, ref.aggregate);
      if (!db_->TableExists(r, table)) return entries;
      sqlite::Transaction snapshot(r, sqlite::Transaction::Kind::kRead);
      for (Version v : std::set<Version>(versions.begin(), versions.end())) {
        Query q(r, std::string("SELECT ") + sqlite::kStoredStreamColumns + " FROM " + sqlite::Quoted(table) +
                       " WHERE tenant_id = ?1 AND aggregate_id = ?2 AND version = ?3");
        q.Bind(1, ref.tenant_id).Bind(2, ref.id).Bind(3, v);
        if (q.Step()) ReadRow(q, db_->path(), context_, ref.aggregate, true, entries.emplace_back());
      }
      snapshot.Commit();
      return entries;
    });
  }

  std::optional<Position> PositionOf(const AggregateRef& ref, Version version) override {
    RequireOwnRef(ref);
    return db_->Read([&](Connection& r) -> std::optional<Position> {
      const std::string table = sqlite::TableName(TableKind::kLog, context_, ref.aggregate);
      if (!db_->TableExists(r, table)) return std::nullopt;
      Query q(r, "SELECT position FROM " + sqlite::Quoted(table) +
                     " WHERE tenant_id = ?1 AND aggregate_id = ?2 AND version = ?3");
      q.Bind(1, ref.tenant_id).Bind(2, ref.id).Bind(3, version);
      if (!q.Step()) return std::nullopt;
      return sqlite::KeyPosition(q.Int(0));
    });
  }

  std::optional<Entry> FindByRequestId(const std::string& aggregate, const std::string& tenant_id,
                                       const std::string& request_id) override {
    ValidateTypeName(aggregate, "aggregate type");
    RequireCreated();
    return db_->Read([&](Connection& r) -> std::optional<Entry> {
      const std::string table = sqlite::TableName(TableKind::kLog, context_, aggregate);
      if (!db_->TableExists(r, table)) return std::nullopt;
      Query q(r, std::string("SELECT ") + sqlite::kStoredStreamColumns + " FROM " + sqlite::Quoted(table) +
                     " WHERE tenant_id = ?1 AND request_id = ?2");
      q.Bind(1, tenant_id).Bind(2, request_id);
      if (!q.Step()) return std::nullopt;
      Entry entry;
      ReadRow(q, db_->path(), context_, aggregate, false, entry);
      return entry;
    });
  }

  Sequence Head(int partition) override {
    RequirePartition(partition);
    return db_->Read([&](Connection& r) { return LastSequence(r, partition); });
  }

  PartitionLineage Lineage(int partition) override {
    RequirePartition(partition);
    return db_->Read([&](Connection& r) {
      Query q(r, "SELECT parent, epoch FROM wow_partitions WHERE context = ?1 AND partition = ?2");
      q.Bind(1, context_).Bind(2, partition);
      PartitionLineage lineage;
      if (q.Step()) {
        if (!q.IsNull(0)) lineage.parent = static_cast<int>(q.Int(0));
        lineage.epoch = static_cast<int>(q.Int(1));
      }
      return lineage;
    });
  }

  // In one read snapshot: the partition's last sequence, the registry's log tables of the
  // context, then each table's entries at sequences after+1 .. min(after+limit, last): one rowid
  // range per table. Sequences are gapless and unique across the tables, so the merge is the run
  // from after+1; it stops at a missing sequence all the same.
  std::vector<Entry> ReadAfter(int partition, Sequence after, int limit) override {
    Require(after >= 0, [&] { return "sequence " + std::to_string(after) + " is below 0"; });
    Require(limit > 0, [&] { return "read limit must be positive, got " + std::to_string(limit); });
    RequirePartition(partition);
    Sequence head = 0;
    std::vector<Entry> entries = db_->Read([&](Connection& r) {
      std::vector<Entry> read;
      sqlite::Transaction snapshot(r, sqlite::Transaction::Kind::kRead);
      head = LastSequence(r, partition);
      if (head <= after) {
        snapshot.Commit();
        return read;
      }
      const Sequence last = after + std::min<Sequence>(limit, head - after);
      read.reserve(static_cast<size_t>(last - after));
      const std::vector<sqlite::RegisteredTable> tables = db_->Tables(r, TableKind::kLog, context_);
      for (const sqlite::RegisteredTable& table : tables) {
        Query q(r, std::string("SELECT ") + sqlite::kStoredStreamColumns + " FROM " + sqlite::Quoted(table.name) +
                       " WHERE position > ?1 AND position <= ?2 ORDER BY position");
        q.Bind(1, sqlite::PositionKey(partition, after))
            .Bind(2, sqlite::PositionKey(partition, last));
        while (q.Step()) ReadRow(q, db_->path(), context_, table.aggregate, true, read.emplace_back());
      }
      snapshot.Commit();
      if (tables.size() > 1) {
        std::sort(read.begin(), read.end(),
                  [](const Entry& a, const Entry& b) { return a.position < b.position; });
      }
      return read;
    });
    if (entries.empty()) return entries;
    // Checked after the snapshot: an entry it holds is unsynced still, or was synced.
    const auto [synced, durable] = SyncedAndDurable(partition, entries.back().position.sequence);
    Sequence expected = after + 1;
    size_t run = 0;
    while (run < entries.size() && entries[run].position.sequence == expected &&
           expected <= synced) {
      ++run;
      ++expected;
    }
    entries.resize(run);
    // Past what this process knows durable, an entry may be another process's commit that its
    // syncer has not synced yet: sync the log here first (that covers every commit so far, the
    // whole snapshot included).
    if (run > 0 && entries.back().position.sequence > durable &&
        db_->options().synchronous == SqliteOptions::Synchronous::kFull) {
      db_->SyncForReaders();
      RaiseDurable(partition, head);
    }
    return entries;
  }

  std::vector<Entry> Tail(int partition, Sequence after, int limit,
                          std::chrono::milliseconds max_wait, std::stop_token stop) override {
    Require(after >= 0, [&] { return "sequence " + std::to_string(after) + " is below 0"; });
    Require(limit > 0, [&] { return "read limit must be positive, got " + std::to_string(limit); });
    RequirePartition(partition);
    return store::TailWithBackoff(*signal_, partition, max_wait, stop, store::TailPolicy{},
                                  [&] { return ReadAfter(partition, after, limit); });
  }

  std::vector<std::string> AggregateTypes() override {
    RequireCreated();
    return db_->Read([&](Connection& r) {
      std::vector<std::string> types;
      for (const auto& table : db_->Tables(r, TableKind::kLog, context_)) {
        types.push_back(table.aggregate);
      }
      return types;
    });
  }

  bool AcquireLease(int partition, const std::string& node,
                    std::chrono::milliseconds ttl) override {
    ValidateLeaseRequest(node, ttl);
    RequirePartition(partition);
    bool acquired = false;
    db_->Write(
        [&](Connection& w) {
          const EpochMillis now = clock_->NowMillis();
          Query q(
              w,
              "UPDATE wow_partitions SET lease_node = ?3, lease_expires_at = ?4 "
              "WHERE context = ?1 AND partition = ?2 AND (lease_node IS NULL OR lease_node = ?3 "
              "OR lease_expires_at <= ?5)");
          q.Bind(1, context_)
              .Bind(2, partition)
              .Bind(3, node)
              .Bind(4, now + ttl.count())
              .Bind(5, now);
          q.Run();
          acquired = w.Changes() == 1;
        },
        1, sqlite::WriteSync::kLazy);
    return acquired;
  }

  // A released lease stays stored, expired at once, so LeaseOf still says who held it last.
  void ReleaseLease(int partition, const std::string& node) override {
    RequirePartition(partition);
    db_->Write(
        [&](Connection& w) {
          Query(w,
                "UPDATE wow_partitions SET lease_expires_at = min(lease_expires_at, ?4) "
                "WHERE context = ?1 AND partition = ?2 AND lease_node = ?3")
              .Bind(1, context_)
              .Bind(2, partition)
              .Bind(3, node)
              .Bind(4, clock_->NowMillis())
              .Run();
        },
        1, sqlite::WriteSync::kLazy);
  }

  std::optional<Lease> LeaseOf(int partition) override {
    RequirePartition(partition);
    return db_->Read([&](Connection& r) -> std::optional<Lease> {
      Query q(r,
              "SELECT lease_node, lease_expires_at FROM wow_partitions "
              "WHERE context = ?1 AND partition = ?2 AND lease_node IS NOT NULL");
      q.Bind(1, context_).Bind(2, partition);
      if (!q.Step()) return std::nullopt;
      return Lease{q.Text(0), q.Int(1)};
    });
  }

  Sequence Checkpoint(int partition, const std::string& subscription) override {
    Require(!subscription.empty(), "subscription name is empty");
    RequirePartition(partition);
    return db_->Read([&](Connection& r) {
      Query q(r,
              "SELECT sequence FROM wow_checkpoints "
              "WHERE context = ?1 AND partition = ?2 AND subscription = ?3");
      q.Bind(1, context_).Bind(2, partition).Bind(3, subscription);
      return q.Step() ? q.Int(0) : Sequence{0};
    });
  }

  void CommitCheckpoint(int partition, const std::string& subscription,
                        Sequence sequence) override {
    Require(!subscription.empty(), "subscription name is empty");
    Require(sequence >= 0,
            [&] { return "checkpoint sequence " + std::to_string(sequence) + " is below 0"; });
    RequirePartition(partition);
    db_->Write(
        [&](Connection& w) {
          Query(w,
                "INSERT INTO wow_checkpoints (context, partition, subscription, sequence) "
                "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (context, partition, subscription) "
                "DO UPDATE SET sequence = max(sequence, excluded.sequence)")
              .Bind(1, context_)
              .Bind(2, partition)
              .Bind(3, subscription)
              .Bind(4, sequence)
              .Run();
        },
        1, sqlite::WriteSync::kLazy);
  }

 private:
  // The positions one AppendAll appended, unsynced until it returns (or throws).
  class UnsyncedEntries {
   public:
    explicit UnsyncedEntries(SqliteEventLog& log) : log_(log) {}
    ~UnsyncedEntries() { Forget(false); }
    UnsyncedEntries(const UnsyncedEntries&) = delete;
    UnsyncedEntries& operator=(const UnsyncedEntries&) = delete;

    void Add(Position position) {
      const std::int64_t key = sqlite::PositionKey(position.partition, position.sequence);
      std::lock_guard lock(log_.unsynced_mutex_);
      log_.unsynced_.insert(key);
      keys_.push_back(key);
    }

    // The append returned: its entries, and every entry before them in their partitions, are as
    // durable as the database's synchronous setting makes an acknowledged append.
    void Acknowledge() { Forget(true); }

   private:
    void Forget(bool acknowledged) {
      if (keys_.empty()) return;
      std::lock_guard lock(log_.unsynced_mutex_);
      for (std::int64_t key : keys_) {
        log_.unsynced_.erase(log_.unsynced_.find(key));
        if (acknowledged) {
          const Position position = sqlite::KeyPosition(key);
          Sequence& durable = log_.durable_[position.partition];
          durable = std::max(durable, position.sequence);
        }
      }
      keys_.clear();
    }

    SqliteEventLog& log_;
    std::vector<std::int64_t> keys_;
  };

  // For `partition`'s entries up to `last`: `last`, or the sequence before the first unsynced
  // entry when that is not after it; and the sequence through which this process knows the
  // partition durable.
  std::pair<Sequence, Sequence> SyncedAndDurable(int partition, Sequence last) {
    std::lock_guard lock(unsynced_mutex_);
    const auto durable_it = durable_.find(partition);
    const Sequence durable = durable_it == durable_.end() ? 0 : durable_it->second;
    const auto first = unsynced_.lower_bound(sqlite::PositionKey(partition, 1));
    if (first == unsynced_.end() || *first > sqlite::PositionKey(partition, last)) {
      return {last, durable};
    }
    return {sqlite::KeyPosition(*first).sequence - 1, durable};
  }

  void RaiseDurable(int partition, Sequence sequence) {
    std::lock_guard lock(unsynced_mutex_);
    Sequence& durable = durable_[partition];
    durable = std::max(durable, sequence);
  }

  // The outcome of appending `stream` in the open write transaction: a duplicate request first,
  // then a version other than the next (or `blocked`: an earlier stream of its aggregate in the
  // group failed), else the stream at its partition's next sequence.
  AppendResult AppendLocked(Connection& w, const Stream& stream, const Encoded& encoded,
                            int partitions, bool blocked) {
    if (encoded.bytes > w.MaxRowBytes()) {
      return AppendResult::Refused("stream of " + ToString(stream.ref) + " takes " +
                                   std::to_string(encoded.bytes) + " bytes; SQLite keeps at most " +
                                   std::to_string(w.MaxRowBytes()) + " bytes per stream");
    }
    const AggregateRef& ref = stream.ref;
    const auto find_key = [&](const ReservationScope& scope, const std::string& key) {
      return reservation_rows_.Load(w, scope, key);
    };
    const std::string table = sqlite::TableName(TableKind::kLog, context_, ref.aggregate);
    const std::string quoted = sqlite::Quoted(table);
    Version current = 0;
    if (db_->TableExists(w, table)) {
      {
        Query q(w, "SELECT position, version FROM " + quoted +
                       " WHERE tenant_id = ?1 AND request_id = ?2");
        q.Bind(1, ref.tenant_id).Bind(2, stream.request_id);
        if (q.Step()) return AppendResult::Duplicate(sqlite::KeyPosition(q.Int(0)), q.Int(1));
      }
      Query q(w,
              "SELECT max(version) FROM " + quoted + " WHERE tenant_id = ?1 AND aggregate_id = ?2");
      q.Bind(1, ref.tenant_id).Bind(2, ref.id);
      if (q.Step() && !q.IsNull(0)) current = q.Int(0);
    }
    if (blocked || stream.version != current + 1) return AppendResult::Conflict();
    // The attempt appends only while each key it reserved is still its own (its pending hold, or
    // confirmed by the owner): a key lost meanwhile (expired and taken, or released at ANY_VERSION)
    // makes the append a conflict, and the command decides again.
    if (!core::AttemptHoldsItsKeys(stream, find_key)) return AppendResult::Conflict();

    const int partition = PartitionOf(ref.tenant_id, ref.id, partitions);
    const Sequence sequence = TakeSequence(w, partition, partitions);
    if (sequence > sqlite::kMaxSequence) {
      throw Error(ErrorCode::kResourceExhausted,
                  "partition " + std::to_string(partition) + " of context \"" + context_ +
                      "\" is full: SQLite keeps at most " + std::to_string(sqlite::kMaxSequence) +
                      " entries per partition");
    }
    db_->EnsureTable(w, TableKind::kLog, context_, ref.aggregate);
    sqlite::StoredStream row;
    row.position = sqlite::PositionKey(partition, sequence);
    row.tenant_id = ref.tenant_id;
    row.aggregate_id = ref.id;
    row.version = stream.version;
    row.request_id = stream.request_id;
    row.time = stream.time;
    row.events = encoded.events;
    if (encoded.facts) row.facts = *encoded.facts;
    row.transport = stream.transport;
    Query(w, "INSERT INTO " + quoted +
                 " (position, tenant_id, aggregate_id, version, request_id, time, events, facts, "
                 "transport, checksum) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
        .Bind(1, row.position)
        .Bind(2, ref.tenant_id)
        .Bind(3, ref.id)
        .Bind(4, stream.version)
        .Bind(5, stream.request_id)
        .Bind(6, stream.time)
        .BindBlob(7, encoded.events)
        .BindBlobOrNull(8, encoded.facts)
        .BindBlob(9, stream.transport)
        .Bind(10, sqlite::StreamChecksum(row))
        .Run();
    // The stream's keys change hands with it, in this transaction (StoreSet::appends_confirm_keys):
    // nothing confirms them after the append.
    const EpochMillis now = clock_->NowMillis();
    core::ApplyKeyFactsInAppend(
        stream,
        [&](const ReservationScope& scope, const std::string& key, const core::ReservationOp& op) {
          return reservation_rows_.Apply(w, scope, key, op, now).answer;
        },
        find_key);
    return AppendResult::Appended({partition, sequence});
  }

  // The next sequence of `partition`, taken in the open write transaction. The writer keeps its
  // guess at each partition's last sequence, so the counter moves with a plain conditional
  // UPDATE (a statement with RETURNING builds and drops a temporary table each time: a sixth of
  // an append's statements in `perf`). A guess gone stale (an append whose savepoint or
  // transaction was undone, another connection's append) fails the condition, and the counter is
  // read and moved as the file has it.
  Sequence TakeSequence(Connection& w, int partition, int partitions) {
    if (last_sequence_guesses_.size() != static_cast<std::size_t>(partitions)) {
      last_sequence_guesses_.assign(static_cast<std::size_t>(partitions), 0);
    }
    Sequence& guess = last_sequence_guesses_[static_cast<std::size_t>(partition)];
    if (guess > 0) {
      Query(w,
            "UPDATE wow_partitions SET last_sequence = ?3 "
            "WHERE context = ?1 AND partition = ?2 AND last_sequence = ?4")
          .Bind(1, context_)
          .Bind(2, partition)
          .Bind(3, guess + 1)
          .Bind(4, guess)
          .Run();
      if (w.Changes() == 1) return ++guess;
    }
    Query q(w,
            "UPDATE wow_partitions SET last_sequence = last_sequence + 1 "
            "WHERE context = ?1 AND partition = ?2 RETURNING last_sequence");
    q.Bind(1, context_).Bind(2, partition);
    if (!q.Step()) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "SQLite database \"" + db_->path() + "\" has no counter for partition " +
                      std::to_string(partition) + " of context \"" + context_ +
                      "\"; the file is damaged or was changed by hand");
    }
    guess = q.Int(0);
    return guess;
  }

  // The last sequence taken in `partition` (0 when none), read with `connection`.
  Sequence LastSequence(Connection& connection, int partition) const {
    Query q(connection,
            "SELECT last_sequence FROM wow_partitions WHERE context = ?1 AND partition = ?2");
    q.Bind(1, context_).Bind(2, partition);
    return q.Step() ? q.Int(0) : Sequence{0};
  }

  int RequireCreated() const {
    const int partitions = partitions_.load();
    if (partitions == 0) {
      throw Error(ErrorCode::kFailedPrecondition,
                  "event log of context \"" + context_ + "\" is not created; call Create first");
    }
    return partitions;
  }

  void RequirePartition(int partition) const { ValidatePartition(partition, RequireCreated()); }

  void RequireOwnRef(const AggregateRef& ref) const {
    RequireCreated();
    ValidateRef(ref);
    Require(ref.context == context_, [&] {
      return "aggregate " + ToString(ref) + " is not of context \"" + context_ + "\"";
    });
  }

  const std::shared_ptr<SqliteDatabase> db_;
  const std::string context_;
  const std::shared_ptr<const Clock> clock_;
  const sqlite::ReservationRows reservation_rows_{db_.get()};
  std::mutex create_mutex_;
  std::atomic<int> partitions_{0};  // 0 until Create; signal_ is set before it
  std::shared_ptr<store::CommitSignal> signal_;
  // Per partition, the last sequence this log's appends took (0: none known); used only inside
  // the writer's transactions, which the group commit runs one at a time (TakeSequence).
  std::vector<Sequence> last_sequence_guesses_;
  std::mutex unsynced_mutex_;
  std::multiset<std::int64_t> unsynced_;  // the position keys of the unsynced entries
  // Per partition, the sequence through which every entry is known durable: this process
  // acknowledged an append there, or synced the log after reading that far.
  std::map<int, Sequence> durable_;
};

}  // namespace

std::unique_ptr<EventLog> NewSqliteEventLog(std::shared_ptr<SqliteDatabase> db,
                                            std::string_view context,
                                            std::shared_ptr<const Clock> clock) {
  return std::make_unique<SqliteEventLog>(std::move(db), std::string(context), std::move(clock));
}

}  // namespace wow
