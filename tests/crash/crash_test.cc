// Crash safety of the SQLite stores: durability and concurrency.
//
// Each round forks child processes that open the database file themselves and write in a loop
// until the test kills them with SIGKILL at a random moment (while they open the file, in the
// first round; within 400 ms of their first acknowledgement, in the others):
//   - three threads create and rename brands through the CommandProcessor (reserve, append,
//     confirm, release), most names drawn from a small pool all children compete for;
//   - one thread reserves token keys directly, appends the tokens' streams (each carrying its
//     key's reservation fact) in AppendAll batches of 1 to 16, and confirms the keys.
// A child reports every acknowledgement in a file of its own, one write(2) per line after the
// call returned, so a line in the file is an acknowledgement the child received. After each round
// the test reopens the file and checks, both with SQLite itself and through the stores:
//   - every acknowledged append is in the log, at the place the child was told;
//   - each partition holds sequences 1..head, each once; each aggregate versions 1..n, each once;
//   - every key has one owner: no two aggregates' current streams hold one key, and once the
//     reservation subscription has caught up, each of those keys is confirmed to its aggregate at
//     the version of the stream that reserved it, as is every confirmation a child reported;
//   - every key still pending belongs to an attempt whose stream did not land (else the
//     subscription confirmed it), and expires one TTL after it was reserved, not before.
//
// The children's choices follow WOW_CRASH_SEED when it is set (the seed is printed); the moments
// of the kills cannot be replayed. The whole test takes a few seconds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "catalog.h"
#include "support/temp_dir.h"
#include "wow/command_processor.h"
#include "wow/error.h"
#include "wow/name_key.h"
#include "wow/sqlite.h"
#include "wow/stream_json.h"
#include "wow/subscription.h"

namespace wow {
namespace {

using std::chrono::milliseconds;

constexpr int kPartitions = 4;
constexpr int kRounds = 4;
constexpr int kChildrenPerRound = 3;
constexpr milliseconds kTtl{30'000};    // far longer than the test: no key expires during it
constexpr int kSharedNames = 8;         // brand names every child competes for
constexpr int kBrandThreads = 3;        // per child, besides one token thread
constexpr int kSharedTokenKeys = 1500;  // token keys drawn at random, so children collide
constexpr const char* kTenant = "t1";
constexpr const char* kTokenKeys = "crash.token-key";
const std::string kContext(eshop::kContext);
const std::string kVerifierNode = "crash-verifier";

EpochMillis Now() { return SystemClock::Instance()->NowMillis(); }

ReservationScope BrandNames() {
  return {kContext, "brand", kTenant, std::string(eshop::kBrandNames)};
}
ReservationScope TokenKeys() { return {kContext, "token", kTenant, kTokenKeys}; }

SqliteOptions FullSync() {
  SqliteOptions options;
  options.synchronous = SqliteOptions::Synchronous::kFull;
  return options;
}

// ---- the children ------------------------------------------------------------------------------

// A child's report file: each Line is one write(2) of a whole line, done before the next call, so
// once a line is written it survives a SIGKILL of its writer.
class Report {
 public:
  explicit Report(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) {
    if (fd_ < 0) _exit(4);
  }
  ~Report() { ::close(fd_); }
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  void Line(const std::string& line) {
    const std::string text = line + "\n";
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) _exit(5);
      done += static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
};

// "A <aggregate> <id> <version> <partition> <sequence> <key>": an append acknowledged.
std::string AppendLine(const AggregateRef& ref, Version version, Position at,
                       const std::string& key) {
  return "A " + ref.aggregate + " " + ref.id + " " + std::to_string(version) + " " +
         std::to_string(at.partition) + " " + std::to_string(at.sequence) + " " + key;
}

// Creates brands and renames them through the command processor, forever.
void BrandLoop(CommandProcessor& processor, Report& report, const std::string& prefix,
               std::mt19937_64 rng) {
  int own = 0;
  // Creates mostly compete for a shared name; renames free one half of the time.
  auto pick_name = [&](int shared_in_4) -> std::string {
    if (static_cast<int>(rng() % 4) < shared_in_4) {
      return "name-" + std::to_string(rng() % kSharedNames);
    }
    return "own-" + prefix + "-" + std::to_string(own++);
  };
  for (int n = 0;; ++n) {
    const AggregateRef brand{kContext, "brand", kTenant, prefix + "-b" + std::to_string(n)};
    std::string name = pick_name(3);
    CommandResult result = processor.Process(brand, CommandMessage::Of(eshop::CreateBrand{name}));
    if (result.kind != CommandResult::Kind::kAccepted) continue;
    report.Line(AppendLine(brand, result.version, result.position, wow::MakeNameKey(name).key));
    for (int renames = static_cast<int>(rng() % 4); renames > 0; --renames) {
      name = pick_name(2);
      result = processor.Process(brand, CommandMessage::Of(eshop::RenameBrand{name}));
      if (result.kind != CommandResult::Kind::kAccepted) continue;
      report.Line(AppendLine(brand, result.version, result.position, wow::MakeNameKey(name).key));
    }
  }
}

// Reserves token keys, appends the tokens in AppendAll batches and confirms the keys, forever.
void TokenLoop(EventLog& log, ReservationStore& keys, Report& report, const std::string& prefix,
               std::mt19937_64 rng) {
  for (int batch = 0;; ++batch) {
    const int size = 1 + static_cast<int>(rng() % 16);
    std::vector<Stream> streams;
    std::vector<std::string> holds;
    for (int i = 0; i < size; ++i) {
      const AggregateRef token{kContext, "token", kTenant,
                               prefix + "-k" + std::to_string(batch) + "-" + std::to_string(i)};
      const std::string key = "key-" + std::to_string(rng() % kSharedTokenKeys);
      const std::string hold = NewId();
      if (!keys.Reserve(TokenKeys(), key, token, hold, kTtl)) continue;
      Stream stream;
      stream.ref = token;
      stream.version = 1;
      stream.request_id = NewId();
      stream.events = {{"crash.TokenIssued", nlohmann::json{{"key", key}}.dump()}};
      stream.reserved = {{kTokenKeys, key, ReservationTenancy::kTenant}};
      stream.time = Now();
      stream.transport = EncodeTransport(stream);
      streams.push_back(std::move(stream));
      holds.push_back(hold);
    }
    if (streams.empty()) continue;
    const std::vector<AppendResult> results = log.AppendAll(streams);
    for (size_t i = 0; i < streams.size(); ++i) {
      const Stream& s = streams[i];
      if (!results[i].appended()) {
        keys.Abandon(TokenKeys(), s.reserved[0].key, s.ref, holds[i]);
        continue;
      }
      report.Line(AppendLine(s.ref, s.version, results[i].position(), s.reserved[0].key));
    }
    for (size_t i = 0; i < streams.size(); ++i) {
      const Stream& s = streams[i];
      if (results[i].appended() && keys.Confirm(TokenKeys(), s.reserved[0].key, s.ref, 1)) {
        report.Line("C token " + s.ref.id + " 1 " + s.reserved[0].key);
      }
    }
  }
}

// The body of a child process: opens its own database (never one carried across fork) and writes
// until it is killed. A failure is reported as "E <message>" and ends the process with status 2.
[[noreturn]] void RunChild(const std::string& db_path, const std::string& report_path,
                           const std::string& prefix, std::uint64_t seed) {
  Report report(report_path);
  auto guarded = [&](auto&& body) {
    try {
      body();
    } catch (const std::exception& e) {
      report.Line(std::string("E ") + e.what());
      _exit(2);
    }
  };
  guarded([&] {
    const auto clock = SystemClock::Instance();
    auto db = OpenSqliteDatabase(db_path, FullSync());
    std::shared_ptr<EventLog> log = NewSqliteEventLog(db, kContext, clock);
    log->Create(kPartitions);
    std::shared_ptr<ReservationStore> keys = NewSqliteReservationStore(db, clock);
    CommandProcessor processor(
        log, keys, clock,
        CommandProcessorOptions{.reservation_ttl = kTtl, .max_attempts = 8, .workers = 1});
    processor.Register(eshop::BrandType());
    std::vector<std::jthread> threads;
    for (int t = 0; t < kBrandThreads; ++t) {
      threads.emplace_back([&, t] {
        guarded([&] {
          BrandLoop(processor, report, prefix + "t" + std::to_string(t),
                    std::mt19937_64(seed * 31 + static_cast<std::uint64_t>(t)));
        });
      });
    }
    threads.emplace_back([&] {
      guarded([&] { TokenLoop(*log, *keys, report, prefix, std::mt19937_64(seed * 31 + 7)); });
    });
  });
  _exit(0);  // not reached: the loops run until the process is killed
}

// ---- what the children reported ---------------------------------------------------------------

struct AckedAppend {
  std::string aggregate;
  std::string id;
  Version version = 0;
  Position position;
  std::string key;
};

struct AckedConfirm {
  std::string aggregate;
  std::string id;
  Version version = 0;
  std::string key;
};

struct Reports {
  std::vector<AckedAppend> appends;
  std::vector<AckedConfirm> confirms;
  std::vector<std::string> errors;
};

// Reads a report file; a last line without its newline was not finished, so it is no
// acknowledgement.
void ReadReport(const std::string& path, Reports& into) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    std::istringstream line(text.substr(start, end - start));
    std::string tag;
    line >> tag;
    if (tag == "A") {
      AckedAppend a;
      line >> a.aggregate >> a.id >> a.version >> a.position.partition >> a.position.sequence >>
          a.key;
      if (line.fail()) into.errors.push_back(path + ": malformed line " + line.str());
      into.appends.push_back(a);
    } else if (tag == "C") {
      AckedConfirm c;
      line >> c.aggregate >> c.id >> c.version >> c.key;
      if (line.fail()) into.errors.push_back(path + ": malformed line " + line.str());
      into.confirms.push_back(c);
    } else {
      into.errors.push_back(path + ": " + line.str());
    }
  }
}

// ---- the file as SQLite sees it ---------------------------------------------------------------

// The log as stored, read with SQLite itself rather than through the stores, so a double or a gap
// the stores' reads would hide is seen.
struct RawLog {
  std::map<int, Sequence> counters;                // wow_partitions.last_sequence
  std::map<int, std::vector<Sequence>> sequences;  // per partition, sorted, as stored
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<Version>>
      versions;  // (aggregate type, tenant, id) -> sorted
};

RawLog ReadRawLog(const std::string& path) {
  RawLog raw;
  sqlite3* handle = nullptr;
  const int opened = sqlite3_open_v2(path.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db(handle, &sqlite3_close);
  if (opened != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path << ": " << sqlite3_errstr(opened);
    return raw;
  }
  auto each_row = [&](const std::string& sql, const std::string& bind,
                      const std::function<void(sqlite3_stmt*)>& row) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db.get());
      return;
    }
    if (!bind.empty()) sqlite3_bind_text(statement, 1, bind.c_str(), -1, SQLITE_TRANSIENT);
    int step;
    while ((step = sqlite3_step(statement)) == SQLITE_ROW) row(statement);
    if (step != SQLITE_DONE) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db.get());
    sqlite3_finalize(statement);
  };
  auto text = [](sqlite3_stmt* s, int column) {
    return std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, column)));
  };
  each_row("BEGIN", "", [](sqlite3_stmt*) {});
  each_row("SELECT partition, last_sequence FROM wow_partitions WHERE context = ?1", kContext,
           [&](sqlite3_stmt* s) {
             raw.counters[sqlite3_column_int(s, 0)] = sqlite3_column_int64(s, 1);
           });
  std::vector<std::pair<std::string, std::string>> tables;
  each_row("SELECT aggregate, name FROM wow_tables WHERE kind = 'log' AND context = ?1", kContext,
           [&](sqlite3_stmt* s) { tables.emplace_back(text(s, 0), text(s, 1)); });
  for (const auto& [aggregate, name] : tables) {
    // The key is the position, partition << 40 | sequence (format 3, docs/SQLITE.md).
    each_row(
        "SELECT position >> 40, position & ((1 << 40) - 1), tenant_id, aggregate_id, version "
        "FROM \"" +
            name + "\"",
        "", [&](sqlite3_stmt* s) {
          raw.sequences[sqlite3_column_int(s, 0)].push_back(sqlite3_column_int64(s, 1));
          raw.versions[{aggregate, text(s, 2), text(s, 3)}].push_back(sqlite3_column_int64(s, 4));
        });
  }
  each_row("COMMIT", "", [](sqlite3_stmt*) {});
  for (auto& [partition, sequences] : raw.sequences) std::sort(sequences.begin(), sequences.end());
  for (auto& [ref, versions] : raw.versions) std::sort(versions.begin(), versions.end());
  return raw;
}

// Where `values` first differs from 1, 2, ..., n: "" when it does not.
std::string FirstGapOrDouble(const std::vector<std::int64_t>& values, std::int64_t n) {
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(values.size()); ++i) {
    if (values[i] != i + 1) {
      return "expected " + std::to_string(i + 1) + " at index " + std::to_string(i) + ", found " +
             std::to_string(values[i]) + (i > 0 && values[i] == values[i - 1] ? " (doubled)" : "");
    }
  }
  if (static_cast<std::int64_t>(values.size()) != n) {
    return "holds " + std::to_string(values.size()) + " values, not " + std::to_string(n);
  }
  return "";
}

// ---- the test ---------------------------------------------------------------------------------

struct Round {
  EpochMillis started = 0;  // before the first fork
  EpochMillis ended = 0;    // after the last child was reaped
};

// The round a child's aggregate id names: "r<round>c<child>...".
int RoundOf(const std::string& id) {
  if (id.empty() || id[0] != 'r') return -1;
  return std::atoi(id.c_str() + 1);
}

std::uint64_t Seed() {
  if (const char* text = std::getenv("WOW_CRASH_SEED")) return std::strtoull(text, nullptr, 10);
  return std::random_device{}();
}

class CrashSafety : public ::testing::Test {
 protected:
  // Forks the round's children, kills each with SIGKILL at a random moment, and reaps them. The
  // first round kills within 40 ms of the fork, while the children open the file and start; the
  // others kill each child within 400 ms of its first acknowledgement (or of kFirstAckWait, if it
  // has none by then), so the kills land mid-work however slow the build (sanitizers, a loaded
  // machine). A child that ended by itself failed: its report says why.
  void RunRound(int round, std::mt19937_64& rng) {
    using SteadyClock = std::chrono::steady_clock;
    constexpr milliseconds kFirstAckWait{5'000};
    struct Child {
      pid_t pid = 0;
      std::string report;
      milliseconds delay{0};
      std::optional<SteadyClock::time_point> kill_at;
      bool killed = false;
    };
    Round times;
    times.started = Now();
    const std::uint64_t max_delay_ms = round == 0 ? 40 : 400;
    std::vector<Child> children;
    for (int c = 0; c < kChildrenPerRound; ++c) {
      const std::string prefix = "r" + std::to_string(round) + "c" + std::to_string(c);
      Child child;
      child.report = dir_.File(prefix + ".report");
      child.delay = milliseconds(rng() % (max_delay_ms + 1));
      report_paths_.push_back(child.report);
      const std::uint64_t child_seed = rng();
      std::cout.flush();
      std::fflush(nullptr);  // nothing buffered is written twice
      child.pid = ::fork();
      ASSERT_GE(child.pid, 0) << "fork failed: " << std::strerror(errno);
      if (child.pid == 0) RunChild(db_path_, child.report, prefix, child_seed);
      children.push_back(child);
    }
    const auto forked = SteadyClock::now();
    if (round == 0) {
      for (Child& child : children) child.kill_at = forked + child.delay;
    }
    for (size_t killed = 0; killed < children.size();) {
      const auto now = SteadyClock::now();
      for (Child& child : children) {
        if (child.killed) continue;
        if (!child.kill_at) {
          std::error_code ignored;
          if (std::filesystem::file_size(child.report, ignored) > 0 ||
              now - forked > kFirstAckWait) {
            child.kill_at = now + child.delay;
          }
        }
        if (child.kill_at && now >= *child.kill_at) {
          ::kill(child.pid, SIGKILL);
          child.killed = true;
          ++killed;
        }
      }
      std::this_thread::sleep_for(milliseconds(1));
    }
    for (const Child& child : children) {
      int status = 0;
      ASSERT_EQ(::waitpid(child.pid, &status, 0), child.pid);
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
          << "child " << child.pid << " of round " << round
          << " was not killed but ended by itself (status " << status
          << "); see its report's E line below";
    }
    times.ended = Now();
    rounds_.push_back(times);
  }

  // Reopens the file and checks everything the file comment lists; `final` adds the expiry check,
  // which takes the pending keys.
  void CheckFile(bool final) {
    Reports reports;
    for (const std::string& path : report_paths_) ReadReport(path, reports);
    for (const std::string& error : reports.errors) ADD_FAILURE() << "a child reported: " << error;
    total_appends_ = reports.appends.size();
    total_confirms_ = reports.confirms.size();

    // The file as SQLite reads it.
    const RawLog raw = ReadRawLog(db_path_);
    ASSERT_EQ(raw.counters.size(), static_cast<size_t>(kPartitions));
    for (const auto& [partition, head] : raw.counters) {
      const auto it = raw.sequences.find(partition);
      const std::string problem =
          FirstGapOrDouble(it == raw.sequences.end() ? std::vector<Sequence>{} : it->second, head);
      EXPECT_EQ(problem, "") << "partition " << partition << " (counter " << head << ")";
    }
    for (const auto& [ref, versions] : raw.versions) {
      EXPECT_EQ(FirstGapOrDouble(versions, static_cast<std::int64_t>(versions.size())), "")
          << "versions of " << std::get<0>(ref) << "/" << std::get<2>(ref);
    }

    // The file through the stores.
    auto clock = std::make_shared<ManualClock>(Now());
    auto db = OpenSqliteDatabase(db_path_, FullSync());
    std::shared_ptr<EventLog> log = NewSqliteEventLog(db, kContext, clock);
    log->Create(kPartitions);
    std::shared_ptr<ReservationStore> keys = NewSqliteReservationStore(db, clock);

    std::map<Position, Stream> at;                         // every stream, by place
    std::map<AggregateRef, std::map<Version, Stream>> of;  // every stream, by aggregate
    for (int p = 0; p < kPartitions; ++p) {
      const Sequence head = log->Head(p);
      EXPECT_EQ(head, raw.counters.at(p)) << "head of partition " << p;
      const std::vector<Entry> entries = log->ReadAfter(p, 0, std::numeric_limits<int>::max());
      EXPECT_EQ(static_cast<Sequence>(entries.size()), head)
          << "ReadAfter(" << p << ", 0) stops before the head";
      for (size_t i = 0; i < entries.size(); ++i) {
        EXPECT_EQ(entries[i].position, (Position{p, static_cast<Sequence>(i) + 1}));
        EXPECT_EQ(DecodeTransport(entries[i].stream.transport).version, entries[i].stream.version);
        at[entries[i].position] = entries[i].stream;
        EXPECT_TRUE(
            of[entries[i].stream.ref].emplace(entries[i].stream.version, entries[i].stream).second)
            << ToString(entries[i].stream.ref) << " has version " << entries[i].stream.version
            << " twice";
      }
    }

    // Every acknowledged append is where its child was told it is.
    for (const AckedAppend& ack : reports.appends) {
      const auto it = at.find(ack.position);
      if (it == at.end()) {
        ADD_FAILURE() << "acknowledged append of " << ack.aggregate << " " << ack.id << " v"
                      << ack.version << " at " << ack.position.partition << ":"
                      << ack.position.sequence << " is not in the log";
        continue;
      }
      const Stream& s = it->second;
      EXPECT_EQ(s.ref, (AggregateRef{kContext, ack.aggregate, kTenant, ack.id}));
      EXPECT_EQ(s.version, ack.version);
      ASSERT_EQ(s.reserved.size(), 1u);
      EXPECT_EQ(s.reserved[0].key, ack.key);
    }

    // One owner per key in the log: each aggregate holds the key its latest stream reserved
    // (every stream of the test reserves one key; a rename releases the previous one).
    struct Holding {
      AggregateRef owner;
      Version version;
    };
    std::map<std::pair<std::string, std::string>, Holding> holder;  // (aggregate type, key)
    std::map<AggregateRef, std::string> current_key;
    for (const auto& [ref, streams] : of) {
      const Stream& latest = streams.rbegin()->second;
      ASSERT_EQ(latest.reserved.size(), 1u) << ToString(ref);
      const std::string& key = latest.reserved[0].key;
      current_key[ref] = key;
      const auto [it, fresh] =
          holder.emplace(std::pair(ref.aggregate, key), Holding{ref, latest.version});
      EXPECT_TRUE(fresh) << "key " << key << " is held by both " << ToString(it->second.owner)
                         << " and " << ToString(ref) << " according to the log";
    }

    // The reservation subscription confirms what landed.
    SubscriptionRunnerOptions runner_options;
    runner_options.node = kVerifierNode;
    SubscriptionRunner runner(log, {NewReservationSubscription(keys, log)}, runner_options);
    runner.CatchUp();

    auto scope_of = [](const std::string& aggregate) {
      return aggregate == "brand" ? BrandNames() : TokenKeys();
    };
    for (const auto& [type_key, holding] : holder) {
      const std::optional<Reservation> r = keys->Find(scope_of(type_key.first), type_key.second);
      ASSERT_TRUE(r) << "key " << type_key.second << " of " << ToString(holding.owner)
                     << " is not reserved after catch-up";
      EXPECT_EQ(r->owner, holding.owner) << "key " << type_key.second;
      EXPECT_EQ(r->state, ReservationState::kConfirmed) << "key " << type_key.second;
      EXPECT_EQ(r->version, holding.version) << "key " << type_key.second;
    }
    for (const AckedConfirm& c : reports.confirms) {
      const std::optional<Reservation> r = keys->Find(scope_of(c.aggregate), c.key);
      ASSERT_TRUE(r) << "confirmed key " << c.key << " of " << c.id << " is gone";
      EXPECT_EQ(r->owner.id, c.id) << "confirmed key " << c.key << " changed owner";
      EXPECT_EQ(r->state, ReservationState::kConfirmed);
      EXPECT_GE(r->version, c.version);
    }

    // Every stored reservation: confirmed ones are the log's holdings; pending ones are attempts
    // that did not land, reserved during their child's round.
    pending_.clear();
    for (const ReservationScope& scope : {BrandNames(), TokenKeys()}) {
      for (std::string after;;) {
        const std::vector<Reservation> page = keys->List(scope, after, 500);
        if (page.empty()) break;
        after = page.back().key;
        for (const Reservation& r : page) {
          const auto held = holder.find({scope.aggregate, r.key});
          if (r.state == ReservationState::kConfirmed) {
            EXPECT_TRUE(held != holder.end() && held->second.owner == r.owner)
                << "key " << r.key << " is confirmed to " << ToString(r.owner)
                << ", which does not hold it in the log";
            continue;
          }
          EXPECT_TRUE(current_key.find(r.owner) == current_key.end() ||
                      current_key.at(r.owner) != r.key)
              << "key " << r.key << " is still pending though " << ToString(r.owner)
              << "'s stream reserving it landed";
          const int round = RoundOf(r.owner.id);
          ASSERT_TRUE(round >= 0 && round < static_cast<int>(rounds_.size()))
              << "pending key " << r.key << " has an owner of no round: " << ToString(r.owner);
          EXPECT_GE(r.expires_at, rounds_[round].started + kTtl.count()) << "key " << r.key;
          EXPECT_LE(r.expires_at, rounds_[round].ended + kTtl.count()) << "key " << r.key;
          pending_.push_back({scope, r});
        }
      }
    }
    if (!final) return;

    // Each pending key of a killed child is still held one millisecond before its expiry, and
    // free at it: a fresh owner takes it then.
    for (const auto& [scope, r] : pending_) {
      const AggregateRef fresh{kContext, scope.aggregate, kTenant, "verifier-" + NewId()};
      clock->Set(r.expires_at - 1);
      EXPECT_FALSE(keys->Reserve(scope, r.key, fresh, NewId(), kTtl))
          << "pending key " << r.key << " of " << ToString(r.owner) << " expired early";
      clock->Set(r.expires_at);
      EXPECT_TRUE(keys->Reserve(scope, r.key, fresh, NewId(), kTtl))
          << "pending key " << r.key << " of " << ToString(r.owner) << " did not expire";
    }
  }

  testing_support::TempDir dir_;
  const std::string db_path_ = dir_.File("crash.db");
  std::vector<std::string> report_paths_;
  std::vector<Round> rounds_;
  std::vector<std::pair<ReservationScope, Reservation>> pending_;
  size_t total_appends_ = 0;
  size_t total_confirms_ = 0;
};

TEST_F(CrashSafety, KilledWritersLoseNoAcknowledgedAppendAndLeaveNoGapDoubleOrSharedKey) {
  const std::uint64_t seed = Seed();
  std::cout << "WOW_CRASH_SEED=" << seed << std::endl;
  std::mt19937_64 rng(seed);
  {
    // The file and its log exist before the first child starts; the children open it.
    auto db = OpenSqliteDatabase(db_path_, FullSync());
    NewSqliteEventLog(db, kContext, SystemClock::Instance())->Create(kPartitions);
  }
  for (int round = 0; round < kRounds; ++round) {
    ASSERT_NO_FATAL_FAILURE(RunRound(round, rng));
    ASSERT_NO_FATAL_FAILURE(CheckFile(round + 1 == kRounds)) << "after round " << round;
  }
  std::cout << kRounds * kChildrenPerRound << " children killed; " << total_appends_
            << " acknowledged appends and " << total_confirms_
            << " acknowledged confirmations found; " << pending_.size()
            << " pending keys of killed children expired after their TTL" << std::endl;
  EXPECT_GT(total_appends_, 0u) << "no child acknowledged anything: the test proved nothing";
}

}  // namespace
}  // namespace wow
