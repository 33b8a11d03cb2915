// CheckSqliteDatabase (wow/sqlite.h): the whole file checked in one read snapshot.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/stream_codec.h"
#include "store/sqlite/database.h"
#include "store/sqlite/stream_checksum.h"
#include "wow/decide_scope.h"
#include "wow/error.h"
#include "wow/sqlite.h"

namespace wow {
namespace {

using sqlite::Connection;
using sqlite::Query;
using sqlite::TableKind;

// The checks of one snapshot, each problem added to the report.
class Checker {
 public:
  Checker(SqliteDatabase& db, Connection& r, std::size_t max_problems, SqliteCheckReport& report)
      : db_(db), r_(r), max_problems_(max_problems), report_(report) {}

  void Run() {
    Integrity();
    std::vector<std::pair<std::string, int>> contexts;
    {
      Query q(r_, "SELECT context, partitions FROM wow_contexts ORDER BY context");
      while (q.Step()) contexts.emplace_back(q.Text(0), static_cast<int>(q.Int(1)));
    }
    for (const auto& [context, partitions] : contexts) Context(context, partitions);
  }

 private:
  void Problem(std::string what) {
    if (report_.problems.size() < max_problems_) report_.problems.push_back(std::move(what));
    ++report_.problem_count;
  }

  // SQLite's own check of every page, index and constraint.
  void Integrity() {
    Query q(r_, "PRAGMA integrity_check(" + std::to_string(max_problems_) + ")");
    while (q.Step()) {
      const std::string line = q.Text(0);
      if (line != "ok") Problem("SQLite integrity check: " + line);
    }
  }

  void Context(const std::string& context, int partitions) {
    std::map<int, Sequence> last;
    {
      Query q(r_, "SELECT partition, last_sequence FROM wow_partitions WHERE context = ?1");
      q.Bind(1, context);
      while (q.Step()) last[static_cast<int>(q.Int(0))] = q.Int(1);
    }
    const std::vector<sqlite::RegisteredTable> logs = db_.Tables(r_, TableKind::kLog, context);
    if (last.empty() && logs.empty()) return;  // a context of timers only
    for (int p = 0; p < partitions; ++p) {
      if (!last.contains(p)) {
        Problem("context \"" + context + "\" has no counter for partition " + std::to_string(p));
      }
    }
    std::map<int, std::vector<Sequence>> sequences;
    for (const sqlite::RegisteredTable& table : logs) {
      Streams(context, table, partitions, sequences);
      Versions(context, table, partitions);
    }
    for (const auto& [partition, head] : last) {
      std::vector<Sequence>& taken = sequences[partition];
      std::sort(taken.begin(), taken.end());
      Sequence expected = 1;
      for (Sequence sequence : taken) {
        if (sequence < expected) {
          Problem("context \"" + context + "\" partition " + std::to_string(partition) +
                  ": sequence " + std::to_string(sequence) + " is held by two streams");
        } else if (sequence > expected) {
          Problem("context \"" + context + "\" partition " + std::to_string(partition) +
                  ": sequences " + std::to_string(expected) + " to " +
                  std::to_string(sequence - 1) + " are missing");
        }
        expected = std::max(expected, sequence + 1);
      }
      if (expected - 1 > head) {
        Problem("context \"" + context + "\" partition " + std::to_string(partition) +
                ": streams run to sequence " + std::to_string(expected - 1) +
                ", past its last sequence " + std::to_string(head));
      } else if (expected - 1 < head) {
        Problem("context \"" + context + "\" partition " + std::to_string(partition) +
                ": sequences " + std::to_string(expected) + " to " + std::to_string(head) +
                " are missing (its last sequence is " + std::to_string(head) + ")");
      }
    }
    for (const sqlite::RegisteredTable& table :
         db_.Tables(r_, TableKind::kReservation, context)) {
      Keys(context, table);
    }
  }

  // Each row's checksum and decoding, and its position collected by partition.
  void Streams(const std::string& context, const sqlite::RegisteredTable& table, int partitions,
               std::map<int, std::vector<Sequence>>& sequences) {
    Query q(r_, std::string("SELECT ") + sqlite::kStoredStreamColumns + " FROM " +
                    sqlite::Quoted(table.name) + " ORDER BY position");
    while (q.Step()) {
      ++report_.streams;
      std::optional<std::int64_t> checksum;
      const sqlite::StoredStream row = sqlite::ReadStoredStream(q, checksum);
      const Position position = sqlite::KeyPosition(row.position);
      const std::string name = StreamName(context, table, row, position);
      if (position.partition >= partitions || position.sequence < 1) {
        Problem(name + " is at a position outside the log");
        continue;
      }
      sequences[position.partition].push_back(position.sequence);
      if (!checksum) {
        Problem(name + " has no checksum");
      } else if (*checksum != sqlite::StreamChecksum(row)) {
        Problem(name + " does not match its checksum");
      } else {
        try {
          Stream stream;
          core::DecodeEvents(row.events);
          core::DecodeFacts(row.facts.value_or(std::string_view()), stream);
        } catch (const Error& e) {
          Problem(name + " cannot be decoded: " + e.what());
        }
      }
    }
  }

  // Each aggregate's versions 1, 2, ... in log order, in the partition its id maps to.
  void Versions(const std::string& context, const sqlite::RegisteredTable& table, int partitions) {
    Query q(r_, "SELECT tenant_id, aggregate_id, version, position FROM " +
                    sqlite::Quoted(table.name) + " ORDER BY tenant_id, aggregate_id, version");
    std::string tenant, id;
    Version previous = 0;
    std::int64_t previous_key = 0;
    while (q.Step()) {
      const bool same = q.TextView(0) == tenant && q.TextView(1) == id;
      if (!same) {
        tenant = q.Text(0);
        id = q.Text(1);
        previous = 0;
        previous_key = 0;
      }
      const Version version = q.Int(2);
      const std::int64_t key = q.Int(3);
      const AggregateRef ref{context, table.aggregate, tenant, id};
      if (version != previous + 1) {
        Problem(ToString(ref) + ": version " + std::to_string(version) + " follows version " +
                std::to_string(previous) + " (versions must be 1, 2, 3, ...)");
      } else if (key <= previous_key) {
        Problem(ToString(ref) + ": version " + std::to_string(version) +
                " lies before version " + std::to_string(previous) + " in the log");
      }
      if (sqlite::KeyPosition(key).partition != PartitionOf(tenant, id, partitions)) {
        Problem(ToString(ref) + " version " + std::to_string(version) + " is in partition " +
                std::to_string(sqlite::KeyPosition(key).partition) + ", not in its partition " +
                std::to_string(PartitionOf(tenant, id, partitions)));
      }
      previous = version;
      previous_key = key;
    }
  }

  // Each key confirmed at a stream's version is among that stream's reserved keys.
  void Keys(const std::string& context, const sqlite::RegisteredTable& table) {
    const std::string log = sqlite::TableName(TableKind::kLog, context, table.aggregate);
    const bool has_log = db_.TableExists(r_, log);
    Query q(r_, "SELECT tenant_id, ns, key, owner_tenant_id, owner_id, version FROM " +
                    sqlite::Quoted(table.name) + " WHERE expires_at IS NULL AND version > ?1");
    q.Bind(1, kUnversioned);
    while (q.Step()) {
      ++report_.keys;
      const ReservationScope scope{context, table.aggregate, q.Text(0), q.Text(1)};
      const std::string key = q.Text(2);
      const AggregateRef owner{context, table.aggregate, q.Text(3), q.Text(4)};
      const Version version = q.Int(5);
      const std::string name = "key \"" + key + "\" of namespace \"" + scope.ns + "\" (tenant \"" +
                               scope.tenant_id + "\"), confirmed for " + ToString(owner) +
                               " at version " + std::to_string(version);
      std::optional<Stream> stream;
      if (has_log) stream = StreamAt(log, owner, version);
      if (!stream) {
        Problem(name + ": the log has no such stream");
        continue;
      }
      const bool held = std::any_of(
          stream->reserved.begin(), stream->reserved.end(), [&](const KeyFact& fact) {
            return fact.key == key && DecideScope::ScopeOf(owner, fact.ns, fact.tenancy) == scope;
          });
      if (!held) Problem(name + ": that stream did not reserve it");
    }
  }

  // The facts of `owner`'s stream at `version` (its damage is Streams' to report), or nullopt.
  std::optional<Stream> StreamAt(const std::string& log, const AggregateRef& owner,
                                 Version version) {
    Query q(r_, "SELECT facts FROM " + sqlite::Quoted(log) +
                    " WHERE tenant_id = ?1 AND aggregate_id = ?2 AND version = ?3");
    q.Bind(1, owner.tenant_id).Bind(2, owner.id).Bind(3, version);
    if (!q.Step()) return std::nullopt;
    Stream stream;
    stream.ref = owner;
    try {
      core::DecodeFacts(q.TextView(0), stream);
    } catch (const Error&) {
      stream.reserved.clear();
    }
    return stream;
  }

  static std::string StreamName(const std::string& context, const sqlite::RegisteredTable& table,
                                const sqlite::StoredStream& row, Position position) {
    const AggregateRef ref{context, table.aggregate, std::string(row.tenant_id),
                           std::string(row.aggregate_id)};
    return "the stream of " + ToString(ref) + " at version " + std::to_string(row.version) +
           " (partition " + std::to_string(position.partition) + ", sequence " +
           std::to_string(position.sequence) + ", table " + table.name + ")";
  }

  SqliteDatabase& db_;
  Connection& r_;
  const std::size_t max_problems_;
  SqliteCheckReport& report_;
};

}  // namespace

SqliteCheckReport CheckSqliteDatabase(const std::shared_ptr<SqliteDatabase>& db,
                                      std::size_t max_problems) {
  Require(db != nullptr, "checking a database needs a database");
  Require(max_problems >= 1, "CheckSqliteDatabase needs max_problems >= 1");
  return db->Read([&](Connection& r) {
    SqliteCheckReport report;
    sqlite::Transaction snapshot(r, sqlite::Transaction::Kind::kRead);
    Checker(*db, r, max_problems, report).Run();
    snapshot.Commit();
    return report;
  });
}

}  // namespace wow
