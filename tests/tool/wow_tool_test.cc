// The `wow` tool, run as a program: each test spawns the built binary (WOW_TOOL_PATH) on a fresh
// database file, which the test fills through the library, and checks its output and exit code.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/damage.h"
#include "support/temp_dir.h"
#ifdef WOW_HAVE_MONGO
#include "support/mongo_test_deployment.h"
#include "wow/mongo.h"
#endif
#include "wow/event_log.h"
#include "wow/model.h"
#include "wow/read_model.h"
#include "wow/reservation_store.h"
#include "wow/sqlite.h"
#include "wow/timer_store.h"

extern char** environ;

namespace wow {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr const char* kContext = "eshop-catalog";
constexpr const char* kBrandNames = "eshop-catalog.brand-name";
constexpr int kPartitions = 4;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<json> JsonLines(const std::string& text) {
  std::vector<json> documents;
  for (const std::string& line : Lines(text)) documents.push_back(json::parse(line));
  return documents;
}

// Waits for `pid` to end, at most `timeout`; kills it when it did not. Returns its exit code, or
// 128 + the signal that ended it.
int WaitFor(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "the tool did not end within " << timeout.count() << " ms; killing it";
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
bool Eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

class WowToolTest : public ::testing::Test {
 protected:
  // libmongoc, set up as the tool loads, keeps its counters in /dev/shm/mongoc-<pid> and leaves the
  // file when the process exits; a later process given the same pid warns on stderr that it falls
  // back to malloc (docs/MONGODB.md). The spawned tools keep no such file, so their stderr is the
  // tool's own.
  static void SetUpTestSuite() { ::setenv("MONGOC_DISABLE_SHM", "1", 1); }

  // Starts the tool with `args` after "--db <file>" (unless `name_db` is false), its output going
  // to files (or `out_path`, a terminal, for both when given).
  pid_t Spawn(const std::vector<std::string>& args, const std::string& out_path = "",
              bool name_db = true) {
    std::vector<std::string> argv{WOW_TOOL_PATH};
    if (name_db) argv.insert(argv.end(), {"--db", db_});
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> pointers;
    for (std::string& arg : argv) pointers.push_back(arg.data());
    pointers.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (out_path.empty()) {
      posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0644);
    } else {
      posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY, 0);
    }
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    const int spawned =
        posix_spawn(&pid, WOW_TOOL_PATH, &actions, nullptr, pointers.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(spawned, 0) << "cannot start " << WOW_TOOL_PATH;
    return pid;
  }

  Result Collect(pid_t pid, std::chrono::milliseconds timeout = 30s) {
    Result result;
    result.exit_code = WaitFor(pid, timeout);
    result.out = ReadFile(out_);
    result.err = ReadFile(err_);
    return result;
  }

  // Runs `wow --db <file> args...` to its end.
  Result Run(const std::vector<std::string>& args) { return Collect(Spawn(args)); }
  // Runs `wow args...` to its end.
  Result RunBare(const std::vector<std::string>& args) { return Collect(Spawn(args, "", false)); }

  // Runs `wow args...` (after "--db <file>") on a fresh pseudo-terminal, reading what it draws
  // until `until` shows or 20 s pass; the screen in `screen`, the result returned.
  Result RunOnTerminal(const std::vector<std::string>& args, const std::string& until,
                       std::string& screen) {
    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    EXPECT_GE(master, 0);
    EXPECT_EQ(grantpt(master), 0);
    EXPECT_EQ(unlockpt(master), 0);
    const pid_t pid = Spawn(args, ptsname(master));
    char buffer[4096];
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (screen.find(until) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd ready{master, POLLIN, 0};
      if (poll(&ready, 1, 100) <= 0) continue;
      const ssize_t n = read(master, buffer, sizeof buffer);
      if (n <= 0) break;  // the tool closed the terminal
      screen.append(buffer, static_cast<std::size_t>(n));
    }
    close(master);
    return Collect(pid, 10s);
  }

  // A failure: a message on stderr, no crash, no stack trace.
  static void ExpectCleanFailure(const Result& result) {
    EXPECT_THAT(result.err, HasSubstr("wow: "));
    EXPECT_THAT(result.err, Not(HasSubstr("terminate")));
    EXPECT_THAT(result.err, Not(HasSubstr("Aborted")));
    EXPECT_THAT(result.err, Not(HasSubstr("Sanitizer")));
  }

  std::shared_ptr<SqliteDatabase> Db() {
    if (!db_handle_) {
      SqliteOptions options;
      options.synchronous = SqliteOptions::Synchronous::kNormal;
      db_handle_ = OpenSqliteDatabase(db_, options);
    }
    return db_handle_;
  }

  std::unique_ptr<EventLog> Log() {
    auto log = NewSqliteEventLog(Db(), kContext, SystemClock::Instance());
    log->Create(kPartitions);
    return log;
  }

  static AggregateRef Brand(const std::string& tenant, const std::string& id) {
    return AggregateRef{kContext, "brand", tenant, id};
  }

  static Stream MakeStream(const AggregateRef& ref, Version version, const std::string& event,
                           const std::string& body) {
    Stream stream;
    stream.ref = ref;
    stream.version = version;
    stream.request_id = ref.id + "-request-" + std::to_string(version);
    stream.events.push_back({event, body});
    stream.time = 1'714'557'600'000 + version;  // 2024-05-01T10:00:00Z
    return stream;
  }

  Position Append(EventLog& log, const Stream& stream) {
    const AppendResult result = log.Append(stream);
    EXPECT_TRUE(result.appended()) << "kind " << static_cast<int>(result.kind()) << ": "
                                   << result.reason();  // KindName is declared, not defined
    return result.position();
  }

  static ReservationScope BrandNames(const std::string& tenant) {
    return ReservationScope{kContext, "brand", tenant, kBrandNames};
  }

  testing_support::TempDir dir_;
  const std::string db_ = dir_.File("store.db");
  const std::string out_ = dir_.File("stdout.txt");
  const std::string err_ = dir_.File("stderr.txt");
  std::shared_ptr<SqliteDatabase> db_handle_;
};

// ---------------------------------------------------------------------------------------------
// init, and what every command needs

TEST_F(WowToolTest, StoreNamesTheFileAsAUriAndDbIsItsSynonym) {
  ASSERT_EQ(
      RunBare({"--store", "sqlite:" + db_, "init", "--context", kContext, "--partitions", "4"})
          .exit_code,
      0);
  Result by_uri = RunBare({"log", "head", "--store", "sqlite:" + db_});
  EXPECT_EQ(by_uri.exit_code, 0) << by_uri.err;
  Result by_path = RunBare({"--store", db_, "log", "head"});
  EXPECT_EQ(by_path.exit_code, 0) << by_path.err;
  EXPECT_EQ(by_path.out, by_uri.out);
  Result by_db = Run({"log", "head"});
  EXPECT_EQ(by_db.out, by_uri.out);

  Result memory = RunBare({"--store", "memory:", "log", "head"});
  EXPECT_EQ(memory.exit_code, 2);
  EXPECT_THAT(memory.err, HasSubstr("reads stores that outlive it"));
  Result unknown = RunBare({"--store", "postgres://x/y", "log", "head"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("accepted: memory:, sqlite:PATH"));
  Result both = Run({"--store", "sqlite:" + db_, "log", "head"});
  EXPECT_EQ(both.exit_code, 2);
  Result neither = RunBare({"log", "head"});
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_THAT(neither.err, HasSubstr("--store URI (or --db PATH) is required"));
  ExpectCleanFailure(neither);
}

TEST_F(WowToolTest, InitCreatesTheLogThenChecksItAndRefusesAnotherPartitionCount) {
  Result created = Run({"init", "--context", kContext, "--partitions", "4"});
  EXPECT_EQ(created.exit_code, 0) << created.err;
  EXPECT_THAT(created.out,
              HasSubstr("Created the log of context \"eshop-catalog\" with 4 partitions"));
  EXPECT_TRUE(std::filesystem::exists(db_));

  Result again = Run({"init", "--context", kContext, "--partitions", "4", "--json"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  const json report = json::parse(again.out);
  EXPECT_EQ(report["partitions"], 4);
  EXPECT_EQ(report["created_context"], false);
  EXPECT_EQ(report["created_file"], false);

  Result refused = Run({"init", "--context", kContext, "--partitions", "8"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.out, "");
  EXPECT_THAT(refused.err, HasSubstr("FAILED_PRECONDITION: SQLite database \"" + db_ + "\""));
  EXPECT_THAT(refused.err, HasSubstr("has 4 partitions, not 8"));
  ExpectCleanFailure(refused);
  EXPECT_EQ(Log()->partitions(), 4);  // nothing changed
}

TEST_F(WowToolTest, InitRejectsBadFlagsWithUsageErrors) {
  Result no_context = Run({"init", "--partitions", "4"});
  EXPECT_EQ(no_context.exit_code, 2);
  EXPECT_THAT(no_context.err, HasSubstr("--context"));

  Result zero = Run({"init", "--context", kContext, "--partitions", "0"});
  EXPECT_EQ(zero.exit_code, 2);
  ExpectCleanFailure(zero);

  Result bad_name = Run({"init", "--context", "Bad Name", "--partitions", "4"});
  EXPECT_EQ(bad_name.exit_code, 2);
  EXPECT_THAT(bad_name.err, HasSubstr("context"));
  ExpectCleanFailure(bad_name);
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(WowToolTest, CommandsOtherThanInitNeedAnExistingFileAndCreateNone) {
  Result result = Run({"log", "head"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("no database file at"));
  ExpectCleanFailure(result);
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(WowToolTest, UsageErrorsExitWithTwo) {
  Result no_command = Run({});
  EXPECT_EQ(no_command.exit_code, 2);
  Result unknown = Run({"log", "sideways"});
  EXPECT_EQ(unknown.exit_code, 2);
  ExpectCleanFailure(unknown);
  Result missing = Run({"reservations", "find", "--aggregate", "brand"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("--tenant"));
}

TEST_F(WowToolTest, TheContextIsTheFilesOnlyOneOrMustBeNamed) {
  Log();
  Result only = Run({"log", "head", "--json"});
  EXPECT_EQ(only.exit_code, 0) << only.err;
  EXPECT_EQ(json::parse(only.out)["context"], kContext);

  NewSqliteEventLog(Db(), "ordering", SystemClock::Instance())->Create(2);
  Result several = Run({"log", "head"});
  EXPECT_EQ(several.exit_code, 2);
  EXPECT_THAT(several.err, HasSubstr("eshop-catalog, ordering"));

  Result named = Run({"log", "head", "--context", "ordering", "--json"});
  EXPECT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(json::parse(named.out)["partitions"], 2);

  Result unknown = Run({"--context", "billing", "log", "head"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("has no log of context \"billing\""));
  EXPECT_THAT(unknown.err, HasSubstr("it has: eshop-catalog, ordering"));
  EXPECT_THAT(unknown.err, HasSubstr("wow --db " + db_ + " --context billing init"));
}

// ---------------------------------------------------------------------------------------------
// log head | read | tail

TEST_F(WowToolTest, LogHeadPrintsEveryPartitionOrOne) {
  auto log = Log();
  const Position first = Append(*log, MakeStream(Brand("acme", "b-1"), 1, "BrandCreated", "{}"));
  Append(*log, MakeStream(Brand("acme", "b-1"), 2, "BrandRenamed", "{}"));
  Append(*log, MakeStream(Brand("acme", "b-2"), 1, "BrandCreated", "{}"));

  Result all = Run({"log", "head", "--json"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const json report = json::parse(all.out);
  ASSERT_EQ(report["heads"].size(), 4u);
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(report["heads"][p]["partition"], p);
    EXPECT_EQ(report["heads"][p]["head"], log->Head(p));
  }

  Result text = Run({"log", "head"});
  EXPECT_THAT(text.out, HasSubstr("partition  head"));
  EXPECT_EQ(Lines(text.out).size(), 2u + kPartitions);

  Result one = Run({"log", "head", "--partition", std::to_string(first.partition), "--json"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(json::parse(one.out)["heads"],
            json::array({{{"partition", first.partition}, {"head", log->Head(first.partition)}}}));

  Result out_of_range = Run({"log", "head", "--partition", "4"});
  EXPECT_EQ(out_of_range.exit_code, 2);
  EXPECT_THAT(out_of_range.err, HasSubstr("partitions 0 to 3"));
}

TEST_F(WowToolTest, LogReadPrintsAnAggregatesStreamsInVersionOrder) {
  auto log = Log();
  Stream created = MakeStream(Brand("acme", "b-1"), 1, "BrandCreated", R"({"name":"Contoso"})");
  created.reserved.push_back({kBrandNames, "contoso", ReservationTenancy::kTenant});
  Stream renamed = MakeStream(Brand("acme", "b-1"), 2, "BrandRenamed", R"({"name":"Fabrikam"})");
  renamed.reserved.push_back({kBrandNames, "fabrikam", ReservationTenancy::kTenant});
  renamed.released.push_back({kBrandNames, "contoso", ReservationTenancy::kTenant});
  const Position at1 = Append(*log, created);
  Append(*log, MakeStream(Brand("acme", "b-2"), 1, "BrandCreated", "{}"));
  const Position at2 = Append(*log, renamed);

  Result text = Run({"log", "read", "--aggregate", "brand", "--tenant", "acme", "--id", "b-1"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out,
              HasSubstr("brand acme/b-1 v1  2024-05-01T10:00:00.001Z  request b-1-request-1"));
  EXPECT_THAT(text.out, HasSubstr("  event BrandCreated {\"name\":\"Contoso\"}"));
  EXPECT_THAT(text.out, HasSubstr("  reserve eshop-catalog.brand-name \"fabrikam\""));
  EXPECT_THAT(text.out, HasSubstr("  release eshop-catalog.brand-name \"contoso\""));
  EXPECT_LT(text.out.find("BrandCreated"), text.out.find("BrandRenamed"));

  Result lines =
      Run({"--json", "log", "read", "--aggregate", "brand", "--tenant", "acme", "--id", "b-1"});
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  const std::vector<json> entries = JsonLines(lines.out);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]["stream"]["version"], 1);
  EXPECT_EQ(entries[0]["partition"], at1.partition);
  EXPECT_EQ(entries[0]["sequence"], at1.sequence);
  EXPECT_EQ(entries[1]["sequence"], at2.sequence);
  EXPECT_EQ(entries[1]["stream"]["events"][0]["type"], "BrandRenamed");

  Result from2 = Run({"--json", "log", "read", "--aggregate", "brand", "--tenant", "acme", "--id",
                      "b-1", "--from", "2"});
  ASSERT_EQ(JsonLines(from2.out).size(), 1u);
  EXPECT_EQ(JsonLines(from2.out)[0]["stream"]["version"], 2);
  Result to1 = Run({"--json", "log", "read", "--aggregate", "brand", "--tenant", "acme", "--id",
                    "b-1", "--to", "1"});
  ASSERT_EQ(JsonLines(to1.out).size(), 1u);
  EXPECT_EQ(JsonLines(to1.out)[0]["stream"]["version"], 1);

  Result none = Run({"log", "read", "--aggregate", "brand", "--tenant", "acme", "--id", "b-404"});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_THAT(none.err, HasSubstr("no streams of eshop-catalog/brand/acme/b-404"));

  Result bad_type = Run({"log", "read", "--aggregate", "Brand!", "--tenant", "acme", "--id", "x"});
  EXPECT_EQ(bad_type.exit_code, 2);
  ExpectCleanFailure(bad_type);
}

TEST_F(WowToolTest, LogTailPrintsAPartitionInSequenceOrder) {
  auto log = Log();
  const AggregateRef b1 = Brand("acme", "b-1");
  const int partition = PartitionOf(b1.tenant_id, b1.id, kPartitions);
  for (Version v = 1; v <= 5; ++v) Append(*log, MakeStream(b1, v, "Touched", "{}"));

  Result all = Run({"--json", "log", "tail", "--partition", std::to_string(partition)});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const std::vector<json> entries = JsonLines(all.out);
  ASSERT_EQ(entries.size(), 5u);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i]["partition"], partition);
    EXPECT_EQ(entries[i]["sequence"], static_cast<Sequence>(i + 1));
    EXPECT_EQ(entries[i]["stream"]["version"], static_cast<Version>(i + 1));
  }

  Result after =
      Run({"--json", "log", "tail", "--partition", std::to_string(partition), "--after", "3"});
  ASSERT_EQ(JsonLines(after.out).size(), 2u);
  EXPECT_EQ(JsonLines(after.out)[0]["sequence"], 4);

  Result limited = Run({"log", "tail", "--partition", std::to_string(partition), "--limit", "2"});
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  EXPECT_THAT(limited.out, HasSubstr("partition " + std::to_string(partition) + " sequence 2  "));
  EXPECT_THAT(limited.out, Not(HasSubstr("sequence 3")));

  Result out_of_range = Run({"log", "tail", "--partition", "9"});
  EXPECT_EQ(out_of_range.exit_code, 2);
  EXPECT_THAT(out_of_range.err, HasSubstr("partitions 0 to 3"));
}

TEST_F(WowToolTest, LogTailFollowSeesANewAppendAndStopsOnSigterm) {
  auto log = Log();
  const AggregateRef b1 = Brand("acme", "b-1");
  const int partition = PartitionOf(b1.tenant_id, b1.id, kPartitions);
  Append(*log, MakeStream(b1, 1, "BrandCreated", "{}"));

  const pid_t pid =
      Spawn({"--json", "log", "tail", "--partition", std::to_string(partition), "--follow"});
  auto lines = [&] { return Lines(ReadFile(out_)).size(); };
  ASSERT_TRUE(Eventually([&] { return lines() == 1; }, 10s)) << ReadFile(err_);

  Append(*log, MakeStream(b1, 2, "BrandRenamed", "{}"));
  ASSERT_TRUE(Eventually([&] { return lines() == 2; }, 10s)) << ReadFile(err_);
  EXPECT_EQ(JsonLines(ReadFile(out_))[1]["stream"]["events"][0]["type"], "BrandRenamed");

  const auto stopping = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  const Result result = Collect(pid, 5s);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, 3s);
}

TEST_F(WowToolTest, LogTailFollowStopsOnSigintToo) {
  auto log = Log();
  const AggregateRef b1 = Brand("acme", "b-1");
  Append(*log, MakeStream(b1, 1, "BrandCreated", "{}"));
  const pid_t pid =
      Spawn({"log", "tail", "--partition",
             std::to_string(PartitionOf(b1.tenant_id, b1.id, kPartitions)), "--follow"});
  // Its first output comes after it set up its signal handling.
  ASSERT_TRUE(Eventually([&] { return !ReadFile(out_).empty(); }, 10s)) << ReadFile(err_);
  ASSERT_EQ(kill(pid, SIGINT), 0);
  const Result result = Collect(pid, 5s);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("BrandCreated"));
}

// ---------------------------------------------------------------------------------------------
// reservations find | list

TEST_F(WowToolTest, ReservationsFindPrintsTheHolderAndListPagesANamespace) {
  Log();
  auto store = NewSqliteReservationStore(Db(), SystemClock::Instance());
  ASSERT_TRUE(store->Confirm(BrandNames("acme"), "contoso", Brand("acme", "b-1"), 3));
  ASSERT_TRUE(
      store->Reserve(BrandNames("acme"), "fabrikam", Brand("acme", "b-2"), "attempt-1", 1h));
  ASSERT_TRUE(store->Confirm(BrandNames(""), "global", Brand("acme", "b-3"), 1));

  Result found = Run({"reservations", "find", "--aggregate", "brand", "--tenant", "acme",
                      "--namespace", kBrandNames, "--key", "contoso"});
  ASSERT_EQ(found.exit_code, 0) << found.err;
  EXPECT_THAT(found.out, HasSubstr("owner     eshop-catalog/brand/acme/b-1"));
  EXPECT_THAT(found.out, HasSubstr("state     confirmed"));
  EXPECT_THAT(found.out, HasSubstr("version   3"));

  Result pending = Run({"--json", "reservations", "find", "--aggregate", "brand", "--tenant",
                        "acme", "--namespace", kBrandNames, "--key", "fabrikam"});
  ASSERT_EQ(pending.exit_code, 0) << pending.err;
  const json reservation = json::parse(pending.out);
  EXPECT_EQ(reservation["state"], "pending");
  EXPECT_EQ(reservation["owner"]["id"], "b-2");
  EXPECT_EQ(reservation["holds"], json::array({"attempt-1"}));
  EXPECT_GT(reservation["expires_at"].get<EpochMillis>(), SystemClock::Instance()->NowMillis());

  Result missing = Run({"reservations", "find", "--aggregate", "brand", "--tenant", "acme",
                        "--namespace", kBrandNames, "--key", "northwind"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_THAT(missing.err, HasSubstr("no reservation of key \"northwind\""));

  Result list = Run({"reservations", "list", "--aggregate", "brand", "--tenant", "acme",
                     "--namespace", kBrandNames});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr("2 reservations"));
  EXPECT_LT(list.out.find("contoso"), list.out.find("fabrikam"));
  EXPECT_THAT(list.out, HasSubstr("attempt-1"));

  Result page = Run({"--json", "reservations", "list", "--aggregate", "brand", "--tenant", "acme",
                     "--namespace", kBrandNames, "--limit", "1"});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  const json first = json::parse(page.out);
  ASSERT_EQ(first["reservations"].size(), 1u);
  EXPECT_EQ(first["reservations"][0]["key"], "contoso");
  EXPECT_EQ(first["next_after"], "contoso");
  Result next = Run({"--json", "reservations", "list", "--aggregate", "brand", "--tenant", "acme",
                     "--namespace", kBrandNames, "--after", "contoso"});
  const json second = json::parse(next.out);
  ASSERT_EQ(second["reservations"].size(), 1u);
  EXPECT_EQ(second["reservations"][0]["key"], "fabrikam");
  EXPECT_TRUE(second["next_after"].is_null());

  Result system = Run({"--json", "reservations", "list", "--aggregate", "brand", "--tenant", "",
                       "--namespace", kBrandNames});
  ASSERT_EQ(system.exit_code, 0) << system.err;
  const json system_keys = json::parse(system.out)["reservations"];
  ASSERT_EQ(system_keys.size(), 1u);
  EXPECT_EQ(system_keys[0]["key"], "global");
  EXPECT_EQ(system_keys[0]["owner"]["tenant_id"], "acme");
}

// reservations lookalikes

TEST_F(WowToolTest, ReservationsLookalikesListsTheKeysTheNameKeyRuleMergesChangesOrRefuses) {
  Log();
  auto store = NewSqliteReservationStore(Db(), SystemClock::Instance());
  const std::vector<std::pair<std::string, std::string>> keys{
      {"contoso", "b-1"},
      {"contoso\u200B", "b-2"},                               // a zero-width space
      {"\uFF43\uFF4F\uFF4E\uFF54\uFF4F\uFF53\uFF4F", "b-3"},  // full-width
      {"stra\u00DFe", "b-4"},                                 // alone, keyed strasse
      {"paypal", "b-5"},
      {"p\u0430ypal", "b-6"},    // Cyrillic а
      {"fabrikam", "b-7"},       // the rule keeps it
      {"con\u202Etoso", "b-8"},  // refused
  };
  for (const auto& [key, owner] : keys) {
    ASSERT_TRUE(store->Confirm(BrandNames("acme"), key, Brand("acme", owner), 1));
  }
  ASSERT_TRUE(store->Reserve(BrandNames("acme"), "northwind\u00AD", Brand("acme", "b-9"),
                             "attempt-1", std::chrono::milliseconds(1)));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // expired: free, left out

  const Result text = Run({"reservations", "lookalikes", "--aggregate", "brand", "--tenant", "acme",
                           "--namespace", kBrandNames});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out,
              HasSubstr("8 keys; the name key rule merges 5 of them into 2, changes 1, refuses 1"));
  EXPECT_THAT(text.out, HasSubstr("contoso\\u200b")) << "the invisible character shows";
  EXPECT_THAT(text.out, HasSubstr("con\\u202etoso"));
  EXPECT_THAT(text.out, HasSubstr("(not allowed: U+202E RIGHT-TO-LEFT OVERRIDE)"));
  const std::size_t sharp_s = text.out.find("stra\u00DFe");
  ASSERT_NE(sharp_s, std::string::npos) << text.out;
  const std::size_t line = text.out.rfind('\n', sharp_s) + 1;
  const std::string changed = text.out.substr(line, text.out.find('\n', sharp_s) - line);
  EXPECT_THAT(changed, StartsWith("strasse "));
  EXPECT_THAT(changed, EndsWith("changed"));
  EXPECT_EQ(text.out.find("fabrikam"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("northwind"), std::string::npos) << text.out;
  // Padded by terminal columns: the full-width key takes 14, the widest.
  EXPECT_THAT(text.out, HasSubstr("\uFF43\uFF4F\uFF4E\uFF54\uFF4F\uFF53\uFF4F  confirmed"));
  EXPECT_THAT(text.out, HasSubstr("stra\u00DFe" + std::string(10, ' ') + "confirmed"));

  const Result js = Run({"--json", "reservations", "lookalikes", "--aggregate", "brand", "--tenant",
                         "acme", "--namespace", kBrandNames});
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const json report = json::parse(js.out);
  EXPECT_EQ(report["keys"], 8);
  ASSERT_EQ(report["merged"].size(), 2u);
  EXPECT_EQ(report["merged"][0]["rule_key"], "contoso");
  ASSERT_EQ(report["merged"][0]["stored"].size(), 3u);
  EXPECT_EQ(report["merged"][0]["stored"][1]["key"], "contoso\u200B");
  EXPECT_EQ(report["merged"][0]["stored"][1]["owner"]["id"], "b-2");
  EXPECT_EQ(report["merged"][1]["rule_key"], "paypal");
  ASSERT_EQ(report["changed"].size(), 1u);
  EXPECT_EQ(report["changed"][0]["rule_key"], "strasse");
  EXPECT_EQ(report["changed"][0]["stored"]["key"], "stra\u00DFe");
  ASSERT_EQ(report["refused"].size(), 1u);
  EXPECT_EQ(report["refused"][0]["rule"], "not_allowed");
  EXPECT_EQ(report["refused"][0]["code_point"], "U+202E");

  const Result empty = Run({"reservations", "lookalikes", "--aggregate", "brand", "--tenant",
                            "other", "--namespace", kBrandNames});
  ASSERT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_THAT(empty.out, HasSubstr("0 keys; the name key rule merges 0 of them into 0"));
  EXPECT_EQ(Run({"reservations", "lookalikes", "--aggregate", "brand"}).exit_code, 2);
}

// ---------------------------------------------------------------------------------------------
// timers find | due

TEST_F(WowToolTest, TimersFindAndDue) {
  Log();
  auto timers = NewSqliteTimerStore(Db(), kContext, kPartitions);
  const EpochMillis now = SystemClock::Instance()->NowMillis();
  auto make = [](const AggregateRef& owner, const std::string& key, EpochMillis due_at) {
    Timer t;
    t.owner = owner;
    t.key = key;
    t.partition = PartitionOf(owner.tenant_id, owner.id, kPartitions);
    t.timer_id = owner.id + "/" + key;
    t.version = 1;
    t.due_at = due_at;
    t.target = owner;
    t.command_type = "ExpireBrand";
    t.body = R"({"reason":"test"})";
    return t;
  };
  const Timer past = make(Brand("acme", "b-1"), "expire", now - 60'000);
  const Timer future = make(Brand("acme", "b-2"), "remind", 32'503'680'000'000);  // year 3000
  ASSERT_TRUE(timers->Put(past));
  ASSERT_TRUE(timers->Put(future));

  Result found = Run({"timers", "find", "--aggregate", "brand", "--tenant", "acme", "--id", "b-1",
                      "--key", "expire"});
  ASSERT_EQ(found.exit_code, 0) << found.err;
  EXPECT_THAT(found.out, HasSubstr("timer id   b-1/expire"));
  EXPECT_THAT(found.out, HasSubstr("state      PENDING"));
  EXPECT_THAT(found.out, HasSubstr("command    ExpireBrand {\"reason\":\"test\"}"));

  Result json_found = Run({"--json", "timers", "find", "--aggregate", "brand", "--tenant", "acme",
                           "--id", "b-2", "--key", "remind"});
  ASSERT_EQ(json_found.exit_code, 0) << json_found.err;
  EXPECT_EQ(json::parse(json_found.out)["due_at"], future.due_at);

  Result missing = Run({"timers", "find", "--aggregate", "brand", "--tenant", "acme", "--id", "b-1",
                        "--key", "nothing"});
  EXPECT_EQ(missing.exit_code, 3);

  Result due_now = Run({"--json", "timers", "due"});
  ASSERT_EQ(due_now.exit_code, 0) << due_now.err;
  const json now_list = json::parse(due_now.out)["timers"];
  ASSERT_EQ(now_list.size(), 1u);
  EXPECT_EQ(now_list[0]["timer_id"], "b-1/expire");

  Result due_later = Run({"--json", "timers", "due", "--until", "3000-01-02T00:00:00Z"});
  const json later_list = json::parse(due_later.out)["timers"];
  ASSERT_EQ(later_list.size(), 2u);
  EXPECT_EQ(later_list[1]["timer_id"], "b-2/remind");

  Result limited = Run({"timers", "due", "--until", std::to_string(future.due_at), "--limit", "1"});
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  EXPECT_THAT(limited.out, HasSubstr("1 timer due by"));
  EXPECT_THAT(limited.out, HasSubstr("b-1"));

  int other = 0;
  while (other == past.partition || other == future.partition) ++other;
  Result elsewhere = Run({"--json", "timers", "due", "--until", "3000-01-02T00:00:00Z",
                          "--partitions", std::to_string(other)});
  EXPECT_TRUE(json::parse(elsewhere.out)["timers"].empty());
  Result both = Run({"--json", "timers", "due", "--until", "3000-01-02T00:00:00Z", "--partitions",
                     std::to_string(past.partition) + "," + std::to_string(future.partition)});
  EXPECT_EQ(json::parse(both.out)["timers"].size(), 2u);

  Result bad_until = Run({"timers", "due", "--until", "tomorrow"});
  EXPECT_EQ(bad_until.exit_code, 2);
  EXPECT_THAT(bad_until.err, HasSubstr("--until"));
  Result bad_partition = Run({"timers", "due", "--partitions", "7"});
  EXPECT_EQ(bad_partition.exit_code, 2);
}

// ---------------------------------------------------------------------------------------------
// migrate-data keys

class MigrateDataTest : public WowToolTest {
 protected:
  std::string WriteExport(const std::vector<std::string>& lines) {
    const std::string path = dir_.File("prepare_brand_name.jsonl");
    std::ofstream out(path, std::ios::binary);
    for (const std::string& line : lines) out << line << '\n';
    return path;
  }

  std::vector<std::string> KeysArgs(const std::string& file) {
    return {"migrate-data", "keys",        "--file", file,       "--namespace",
            kBrandNames,    "--aggregate", "brand",  "--tenant", "acme"};
  }

  std::vector<Reservation> All(const std::string& tenant = "acme") {
    return NewSqliteReservationStore(Db(), SystemClock::Instance())
        ->List(BrandNames(tenant), "", 10'000);
  }
};

// The sample export: what each line is, and what the import makes of it.
const std::vector<std::string> kSampleExport = {
    // 1: a document value, held forever (ttlAt null): imported
    R"({"_id": "contoso", "value": {"id": "b-1", "name": "Contoso"}, "ttlAt": null})",
    // 2: a plain string value, Long.MAX_VALUE ttlAt (canonical $numberLong): imported
    R"({"_id": "fabrikam", "value": "b-2", "ttlAt": {"$date": {"$numberLong": "9223372036854775807"}}})",
    // 3: expired (ISO $date in the past): skipped
    R"({"_id": "old", "value": {"id": "b-3"}, "ttlAt": {"$date": "2001-01-01T00:00:00.000Z"}})",
    // 4: not JSON: bad
    R"({"_id": "broken", )",
    // 5: blank: ignored
    "",
    // 6: no owner id at "id": bad
    R"({"_id": "northwind", "value": {"owner": {"id": "b-4"}}})",
    // 7: an $oid owner id, ttlAt in the future: imported
    R"({"_id": "litware", "value": {"id": {"$oid": "65f0c0ffee0123456789abcd"}}, "ttlAt": {"$date": "2999-01-01T00:00:00Z"}})",
    // 8: expired ($date as a number of milliseconds)
    R"({"_id": "numbered", "value": {"id": 42}, "ttlAt": {"$date": 1000}})",
    // 9: no _id: bad
    R"({"value": {"id": "b-9"}})",
    // 10: held by another brand: conflict
    R"({"_id": "taken", "value": {"id": "b-5"}})",
    // 11: already held by its owner (confirmed at version 3): already held
    R"({"_id": "adventure-works", "value": {"id": "b-6"}})",
};

TEST_F(MigrateDataTest, ImportsConfirmedKeysSkipsExpiredReportsBadLinesAndCountsConflicts) {
  Log();
  auto store = NewSqliteReservationStore(Db(), SystemClock::Instance());
  ASSERT_TRUE(store->Confirm(BrandNames("acme"), "taken", Brand("acme", "b-99"), 2));
  ASSERT_TRUE(store->Confirm(BrandNames("acme"), "adventure-works", Brand("acme", "b-6"), 3));
  const std::string file = WriteExport(kSampleExport);

  std::vector<std::string> args = KeysArgs(file);
  args.push_back("--json");
  Result first = Run(args);
  EXPECT_EQ(first.exit_code, 4) << first.err;  // finished, with bad lines and a conflict
  const json summary = json::parse(first.out);
  EXPECT_EQ(summary["lines"], 11);
  EXPECT_EQ(summary["imported"], 3);
  EXPECT_EQ(summary["already_held"], 1);
  EXPECT_EQ(summary["expired"], 2);
  EXPECT_EQ(summary["conflicts"], 1);
  EXPECT_EQ(summary["bad_lines"], 3);
  EXPECT_THAT(first.err, HasSubstr("line 4: bad line"));
  EXPECT_THAT(first.err, HasSubstr("line 6: bad line, skipped: \"value\" has no field \"id\""));
  EXPECT_THAT(first.err, HasSubstr("line 9: bad line, skipped: no \"_id\""));
  EXPECT_THAT(first.err, HasSubstr("line 10: conflict: key \"taken\" is held by "
                                   "eshop-catalog/brand/acme/b-99 (confirmed at version 2)"));
  EXPECT_THAT(first.err, Not(HasSubstr("line 5")));
  EXPECT_THAT(first.err, Not(HasSubstr("line 3")));
  ExpectCleanFailure(first);

  const std::optional<Reservation> contoso = store->Find(BrandNames("acme"), "contoso");
  ASSERT_TRUE(contoso.has_value());
  EXPECT_EQ(contoso->owner, Brand("acme", "b-1"));
  EXPECT_EQ(contoso->state, ReservationState::kConfirmed);
  EXPECT_EQ(contoso->version, kUnversioned);
  EXPECT_EQ(store->Find(BrandNames("acme"), "fabrikam")->owner, Brand("acme", "b-2"));
  EXPECT_EQ(store->Find(BrandNames("acme"), "litware")->owner,
            Brand("acme", "65f0c0ffee0123456789abcd"));
  EXPECT_FALSE(store->Find(BrandNames("acme"), "old").has_value());
  EXPECT_FALSE(store->Find(BrandNames("acme"), "numbered").has_value());
  EXPECT_EQ(store->Find(BrandNames("acme"), "taken")->owner, Brand("acme", "b-99"));
  EXPECT_EQ(store->Find(BrandNames("acme"), "adventure-works")->version, 3);  // not lowered
  const std::vector<Reservation> after_first = All();
  EXPECT_EQ(after_first.size(), 5u);

  // A second run changes nothing: what the first imported is now "already held".
  Result second = Run(args);
  EXPECT_EQ(second.exit_code, 4) << second.err;
  const json again = json::parse(second.out);
  EXPECT_EQ(again["imported"], 0);
  EXPECT_EQ(again["already_held"], 4);
  EXPECT_EQ(again["expired"], 2);
  EXPECT_EQ(again["conflicts"], 1);
  EXPECT_EQ(again["bad_lines"], 3);
  EXPECT_EQ(All(), after_first);
}

TEST_F(MigrateDataTest, PrintsASummaryAndExitsZeroWhenEveryLineWasFine) {
  Log();
  const std::string file = WriteExport({
      R"({"_id": "contoso", "value": {"id": "b-1"}, "ttlAt": null})",
      R"({"_id": "fabrikam", "value": {"id": "b-2"}, "ttlAt": {"$date": "2000-01-01T00:00:00+08:00"}})",
  });
  Result result = Run(KeysArgs(file));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_THAT(result.out, HasSubstr("lines read         2"));
  EXPECT_THAT(result.out, HasSubstr("imported           1"));
  EXPECT_THAT(result.out, HasSubstr("already held       0"));
  EXPECT_THAT(result.out, HasSubstr("expired, skipped   1"));
  EXPECT_THAT(result.out, HasSubstr("conflicts          0"));
  EXPECT_THAT(result.out, HasSubstr("bad lines          0"));
  EXPECT_THAT(result.out, Not(HasSubstr("\r")));  // no progress bar off a terminal
}

TEST_F(MigrateDataTest, OwnerIdsAndKeysTheServiceRefusesAreBadLinesNotImported) {
  Log();
  const std::string file = WriteExport({
      R"({"_id": "slash", "value": {"id": "a/b"}})",
      R"({"_id": "control", "value": {"id": "a\u0007b"}})",
      R"({"_id": "uuid", "value": {"id": {"$uuid": "not-a-uuid"}}})",
      R"({"_id": "long", "value": {"id": {"$numberLong": "99999999999999999999"}}})",
      R"({"_id": "int", "value": {"id": {"$numberInt": "2147483648"}}})",
      R"({"_id": "oid", "value": {"id": {"$oid": "xyz"}}})",
      R"({"_id": "bell\u0007", "value": {"id": "b-1"}})",
      R"({"_id": "c1\u009b", "value": {"id": "b-1"}})",
      R"({"_id": "good-uuid", "value": {"id": {"$uuid": "123e4567-e89b-12d3-a456-426614174000"}}})",
      R"({"_id": "good-long", "value": {"id": {"$numberLong": "-9223372036854775808"}}})",
  });
  Result result = Run(KeysArgs(file));
  EXPECT_EQ(result.exit_code, 4) << result.out << result.err;
  EXPECT_THAT(result.out, HasSubstr("imported           2"));
  EXPECT_THAT(result.out, HasSubstr("bad lines          8"));
  for (const char* why :
       {"line 1: bad line", "\"a/b\" is not 1 to 128 characters", "line 2: bad line",
        "a\\x07b", "line 3: bad line", "not a UUID", "line 4: bad line", "not a 64-bit integer",
        "line 5: bad line", "not a 32-bit integer", "line 6: bad line", "not 24 hex digits",
        "line 7: bad line", "has a control character", "line 8: bad line"}) {
    EXPECT_THAT(result.err, HasSubstr(why));
  }
  std::vector<std::string> keys;
  for (const Reservation& r : All()) keys.push_back(r.key);
  EXPECT_THAT(keys, ::testing::UnorderedElementsAre("good-uuid", "good-long"));
}

TEST_F(MigrateDataTest, ReadsTheOwnerAtADottedPathIntoTheOwnersTenant) {
  Log();
  const std::string file = WriteExport({
      R"({"_id": "contoso", "value": {"owner": {"id": "b-1"}}, "ttlAt": null})",
      R"({"_id": "plain", "value": "b-2", "ttlAt": null})",
      R"({"_id": "flat", "value": {"id": "b-3"}, "ttlAt": null})",
  });
  std::vector<std::string> args = {"migrate-data",  "keys",      "--file",         file,
                                   "--namespace",   kBrandNames, "--aggregate",    "brand",
                                   "--tenant",      "",          "--owner-tenant", "acme",
                                   "--owner-field", "owner.id",  "--json"};
  Result result = Run(args);
  EXPECT_EQ(result.exit_code, 4) << result.err;
  const json summary = json::parse(result.out);
  EXPECT_EQ(summary["imported"], 2);
  EXPECT_EQ(summary["bad_lines"], 1);
  EXPECT_THAT(result.err,
              HasSubstr("line 3: bad line, skipped: \"value\" has no field \"owner.id\""));
  const std::vector<Reservation> system = All("");
  ASSERT_EQ(system.size(), 2u);
  EXPECT_EQ(system[0].key, "contoso");
  EXPECT_EQ(system[0].owner, Brand("acme", "b-1"));
  EXPECT_EQ(system[1].owner, Brand("acme", "b-2"));
}

TEST_F(MigrateDataTest, DryRunReportsWhatItWouldDoAndWritesNothing) {
  Log();
  auto store = NewSqliteReservationStore(Db(), SystemClock::Instance());
  ASSERT_TRUE(store->Confirm(BrandNames("acme"), "taken", Brand("acme", "b-99"), 2));
  const std::string file = WriteExport({
      R"({"_id": "contoso", "value": {"id": "b-1"}})",
      R"({"_id": "taken", "value": {"id": "b-5"}})",
  });
  std::vector<std::string> args = KeysArgs(file);
  args.insert(args.end(), {"--dry-run", "--json"});
  Result result = Run(args);
  EXPECT_EQ(result.exit_code, 4) << result.err;
  const json summary = json::parse(result.out);
  EXPECT_EQ(summary["dry_run"], true);
  EXPECT_EQ(summary["imported"], 1);
  EXPECT_EQ(summary["conflicts"], 1);
  EXPECT_EQ(All().size(), 1u);  // only "taken", as before
}

TEST_F(MigrateDataTest, RefusesWhatItCannotReadWithAClearMessage) {
  Log();
  Result missing = Run(KeysArgs(dir_.File("nothing.jsonl")));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("cannot read the export file"));
  ExpectCleanFailure(missing);

  const std::string array = WriteExport({R"([{"_id": "contoso", "value": "b-1"}])"});
  Result refused = Run(KeysArgs(array));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("--jsonArray"));

  std::vector<std::string> bad_path = KeysArgs(array);
  bad_path.insert(bad_path.end(), {"--owner-field", "owner..id"});
  EXPECT_EQ(Run(bad_path).exit_code, 2);

  std::vector<std::string> bad_namespace = KeysArgs(array);
  bad_namespace[5] = "";
  Result empty_namespace = Run(bad_namespace);
  EXPECT_EQ(empty_namespace.exit_code, 2);
  ExpectCleanFailure(empty_namespace);
}

TEST_F(MigrateDataTest, TheFirstLineOfAKeyWinsAndEachKeyCountsOnce) {
  Log();
  // 20 keys, each on six lines in one batch: five owners, then the first owner again.
  std::vector<std::string> lines;
  for (int round = 0; round < 6; ++round) {
    for (int key = 0; key < 20; ++key) {
      lines.push_back(R"({"_id": "key-)" + std::to_string(key) + R"(", "value": "b-)" +
                      std::to_string(key) + "-" + std::to_string(round % 5) + R"("})");
    }
  }
  std::vector<std::string> args = KeysArgs(WriteExport(lines));
  args.push_back("--json");
  for (int run = 0; run < 3; ++run) {
    const Result result = Run(args);
    EXPECT_EQ(result.exit_code, 4) << result.err;
    const json summary = json::parse(result.out);
    EXPECT_EQ(summary["imported"], run == 0 ? 20 : 0);
    EXPECT_EQ(summary["already_held"], run == 0 ? 20 : 40);
    EXPECT_EQ(summary["conflicts"], 80);
  }
  const std::vector<Reservation> all = All();
  ASSERT_EQ(all.size(), 20u);
  for (const Reservation& r : all) {
    EXPECT_EQ(r.owner.id, "b-" + r.key.substr(4) + "-0") << r.key;
  }
}

TEST_F(MigrateDataTest, ALineOverOneMebibyteIsABadLineQuotedShort) {
  Log();
  const std::string huge = R"({"_id": ")" + std::string(2 << 20, 'x') + R"(", "value": "b-1"})";
  const std::string broken = R"({"_id": ")" + std::string(100'000, 'y');  // not JSON, long
  std::vector<std::string> args = KeysArgs(
      WriteExport({huge, broken, R"({"_id": "contoso", "value": "b-2"})"}));
  args.push_back("--json");
  const Result result = Run(args);
  EXPECT_EQ(result.exit_code, 4) << result.err.substr(0, 2000);
  const json summary = json::parse(result.out);
  EXPECT_EQ(summary["bad_lines"], 2);
  EXPECT_EQ(summary["imported"], 1);
  EXPECT_THAT(result.err, HasSubstr("line 1: bad line, skipped: over 1048576 bytes"));
  EXPECT_THAT(result.err, HasSubstr("line 2: bad line"));
  EXPECT_LT(result.err.size(), 1000u) << "messages quote a few hundred bytes of a line at most";
}

TEST_F(MigrateDataTest, DevZeroStopsWithAnError) {
  Log();
  const Result result = Run(KeysArgs("/dev/zero"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("NUL byte"));
}

TEST_F(WowToolTest, TextOutputEscapesControlCharacters) {
  Log();
  auto store = NewSqliteReservationStore(Db(), SystemClock::Instance());
  ASSERT_TRUE(store->Confirm(BrandNames("acme"), "evil\x1b]0;owned\x07\x1b[2J\u009b",
                             Brand("acme", "b-1"), 1));
  const Result list = Run({"reservations", "list", "--aggregate", "brand", "--tenant", "acme",
                           "--namespace", kBrandNames});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.find('\x1b'), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find('\x07'), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("\u009b"), std::string::npos) << list.out;
  EXPECT_THAT(list.out, HasSubstr("evil\\x1b]0;owned\\x07\\x1b[2J\\u009b"));
}

TEST_F(WowToolTest, TextOutputShowsInvisibleCharactersEscaped) {
  Log();
  auto store = NewSqliteReservationStore(Db(), SystemClock::Instance());
  ASSERT_TRUE(store->Confirm(BrandNames("acme"), "con\u200Btoso\u202E\u2028\U000E0041\xFF",
                             Brand("acme", "b-1"), 1));
  const Result list = Run({"reservations", "list", "--aggregate", "brand", "--tenant", "acme",
                           "--namespace", kBrandNames});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.find("\u202E"), std::string::npos) << list.out;
  EXPECT_THAT(list.out, HasSubstr("con\\u200btoso\\u202e\\u2028\\U000e0041\\xff"));
}

// Every stored string a timer or a log entry shows (keys, types, bodies, ids) is escaped too.
TEST_F(WowToolTest, TimersAndLogEntriesShowControlCharactersEscaped) {
  auto log = Log();
  const std::string evil = "evil\x1b]0;owned\x07\x1b[2J";
  const std::string shown = "evil\\x1b]0;owned\\x07\\x1b[2J";
  const AggregateRef owner = Brand("acme", "b-1");
  Timer timer;
  timer.owner = owner;
  timer.key = evil;
  timer.partition = PartitionOf(owner.tenant_id, owner.id, kPartitions);
  timer.timer_id = "t-1";
  timer.version = 1;
  timer.due_at = 1'000;
  timer.target = owner;
  timer.command_type = evil;
  timer.body = "{\"reason\":\"\u009b\u202e\"}";  // JSON may hold C1 and bidi controls raw
  ASSERT_TRUE(NewSqliteTimerStore(Db(), kContext, kPartitions)->Put(timer));
  Stream stream = MakeStream(owner, 1, evil, "{}");
  stream.request_id = evil;
  TimerFact fact;
  fact.key = evil;
  fact.timer_id = "t-1";
  fact.due_at = 1'000;
  fact.target = owner;
  fact.command_type = evil;
  fact.body = "{}";
  stream.timers.push_back(fact);
  Append(*log, stream);

  const Result found = Run({"timers", "find", "--aggregate", "brand", "--tenant", "acme", "--id",
                            "b-1", "--key", evil});
  const Result due = Run({"timers", "due"});
  const Result read = Run({"log", "read", "--aggregate", "brand", "--tenant", "acme", "--id", "b-1"});
  for (const Result* result : {&found, &due, &read}) {
    EXPECT_EQ(result->exit_code, 0) << result->err;
    EXPECT_EQ(result->out.find('\x1b'), std::string::npos) << result->out;
    EXPECT_EQ(result->out.find('\x07'), std::string::npos) << result->out;
    EXPECT_THAT(result->out, HasSubstr(shown));
  }
  EXPECT_THAT(found.out, HasSubstr("key        " + shown));
  EXPECT_THAT(found.out, HasSubstr("{\"reason\":\"\\u009b\\u202e\"}"));
  EXPECT_EQ(found.out.find("\u202e"), std::string::npos) << found.out;
  EXPECT_THAT(read.out, HasSubstr("request " + shown));
  EXPECT_THAT(read.out, HasSubstr("schedule timer \"" + shown + "\""));
}

TEST_F(MigrateDataTest, StopsCleanlyOnSigintAndASecondRunFinishes) {
  Log();
  std::vector<std::string> lines;
  for (int i = 0; i < 5000; ++i) {
    lines.push_back(R"({"_id": "key-)" + std::to_string(i) + R"(", "value": "b-)" +
                    std::to_string(i) + R"("})");
  }
  const std::vector<std::string> args = KeysArgs(WriteExport(lines));
  const pid_t pid = Spawn(args);
  // Once a key is in, the import runs (and handles signals); stop it.
  ASSERT_TRUE(Eventually([&] { return !All().empty(); }, 20s)) << ReadFile(err_);
  kill(pid, SIGINT);
  const Result stopped = Collect(pid, 20s);
  if (stopped.exit_code == 1) {
    EXPECT_THAT(stopped.out, HasSubstr("(interrupted; run again to finish)"));
  } else {
    EXPECT_EQ(stopped.exit_code, 0) << stopped.err;  // it finished before the signal
  }
  EXPECT_THAT(stopped.out, HasSubstr("lines read"));

  std::vector<std::string> again = args;
  again.push_back("--json");
  const Result finished = Run(again);
  EXPECT_EQ(finished.exit_code, 0) << finished.err;
  const json summary = json::parse(finished.out);
  EXPECT_EQ(summary["imported"].get<int>() + summary["already_held"].get<int>(), 5000);
  EXPECT_EQ(All().size(), 5000u);
}

TEST_F(MigrateDataTest, DrawsAProgressBarOnATerminal) {
  Log();
  const std::string file = WriteExport({R"({"_id": "contoso", "value": "b-1"})"});
  std::string screen;
  const Result result = RunOnTerminal(KeysArgs(file), "bad lines", screen);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(screen, HasSubstr("100%"));
  EXPECT_THAT(screen, HasSubstr("\r\x1b[2K["));  // drawn in place
  EXPECT_THAT(screen, HasSubstr("imported           1"));
}

// ---------------------------------------------------------------------------------------------
// check, and the read-only commands

TEST_F(WowToolTest, CheckReportsASoundFileAndExitsZero) {
  auto log = Log();
  Append(*log, MakeStream(Brand("acme", "b-1"), 1, "BrandCreated", R"({"name":"Contoso"})"));
  Append(*log, MakeStream(Brand("acme", "b-1"), 2, "BrandRenamed", R"({"name":"Fabrikam"})"));
  Result text = Run({"check"});
  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_THAT(text.out, HasSubstr("2 streams"));
  EXPECT_THAT(text.out, HasSubstr("no damage found"));
  Result json_report = Run({"--json", "check"});
  ASSERT_EQ(json_report.exit_code, 0) << json_report.err;
  EXPECT_EQ(json::parse(json_report.out)["ok"], true);
}

TEST_F(WowToolTest, CheckFindsAFlippedBitOfAStreamAndExitsFive) {
  auto log = Log();
  Append(*log, MakeStream(Brand("acme", "b-1"), 1, "BrandCreated", R"({"name":"Contoso"})"));
  Append(*log, MakeStream(Brand("acme", "b-2"), 1, "BrandCreated", R"({"name":"Northwind"})"));
  log.reset();
  db_handle_.reset();  // the last connection folds the log into the file
  ASSERT_TRUE(testing_support::FlipABitOf(db_, "Northwind"));
  Result text = Run({"check"});
  EXPECT_EQ(text.exit_code, 5) << text.out << text.err;
  EXPECT_THAT(text.out, HasSubstr("eshop-catalog/brand/acme/b-2 at version 1"));
  EXPECT_THAT(text.out, HasSubstr("does not match its checksum"));
  EXPECT_THAT(text.out, HasSubstr("1 problems found"));
  // A read of the stream names it too.
  Result read = Run({"log", "read", "--aggregate", "brand", "--tenant", "acme", "--id", "b-2"});
  EXPECT_EQ(read.exit_code, 1);
  ExpectCleanFailure(read);
  EXPECT_THAT(read.err, HasSubstr("DATA_LOSS"));
  EXPECT_THAT(read.err, HasSubstr("eshop-catalog/brand/acme/b-2 at version 1"));
}

TEST_F(WowToolTest, CheckOfAFileWhoseHeaderIsDamagedExitsFive) {
  Log();
  db_handle_.reset();
  std::string bytes = ReadFile(db_);
  bytes[3] = 'X';  // "SQLite format 3"
  std::ofstream(db_, std::ios::binary | std::ios::trunc) << bytes;
  Result text = Run({"check"});
  EXPECT_EQ(text.exit_code, 5) << text.out << text.err;
  EXPECT_THAT(text.out, HasSubstr("damaged, not opened"));
}

// What a writer killed with its last commits in the write-ahead log leaves: the file and its log.
// A read-only command reads both and changes neither (a writable open would fold the log into the
// file when it closes), and creates no journal.
TEST_F(WowToolTest, ReadOnlyCommandsLeaveTheFileAndItsLogAsTheyAre) {
  auto log = Log();
  for (int i = 0; i < 20; ++i) {
    Append(*log, MakeStream(Brand("acme", "b-" + std::to_string(i)), 1, "BrandCreated", "{}"));
  }
  const std::string copy = dir_.File("crashed.db");
  std::filesystem::copy_file(db_, copy);
  std::filesystem::copy_file(db_ + "-wal", copy + "-wal");
  ASSERT_GT(std::filesystem::file_size(copy + "-wal"), 0u);
  const std::string file = ReadFile(copy);
  const std::string wal = ReadFile(copy + "-wal");
  Sequence total = 0;
  for (int p = 0; p < kPartitions; ++p) total += log->Head(p);

  Result head = RunBare({"--db", copy, "--json", "log", "head"});
  ASSERT_EQ(head.exit_code, 0) << head.err;
  const json heads = json::parse(head.out);
  Sequence read = 0;
  for (const json& h : heads["heads"]) read += h["head"].get<Sequence>();
  EXPECT_EQ(read, total) << head.out;
  Result check = RunBare({"--db", copy, "check"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  Result timers = RunBare({"--db", copy, "timers", "due"});
  EXPECT_EQ(timers.exit_code, 0) << timers.err;

  EXPECT_TRUE(ReadFile(copy) == file) << "the database file changed";
  EXPECT_TRUE(ReadFile(copy + "-wal") == wal) << "the write-ahead log changed";
  EXPECT_FALSE(std::filesystem::exists(copy + "-journal"));
}

// A user who may only read the file and its directory (not root: the test drops to nobody with
// setpriv, as CI runs as root) can look into it.
TEST_F(WowToolTest, LogHeadWorksForAUserWhoMayOnlyReadTheFile) {
  if (geteuid() != 0 || !std::filesystem::exists("/usr/bin/setpriv")) {
    GTEST_SKIP() << "needs root and setpriv to run the tool as another user";
  }
  auto log = Log();
  Append(*log, MakeStream(Brand("acme", "b-1"), 1, "BrandCreated", "{}"));
  log.reset();
  db_handle_.reset();
  ASSERT_EQ(Run({"log", "head"}).exit_code, 0);  // as root: leaves -wal and -shm, as a live file has
  std::filesystem::permissions(dir_.path(), std::filesystem::perms(0755));
  for (const std::string& file : {db_, db_ + "-wal", db_ + "-shm"}) {
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    std::filesystem::permissions(file, std::filesystem::perms(0644));
  }
  pid_t pid = 0;
  std::vector<std::string> argv{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                "--clear-groups", WOW_TOOL_PATH, "--db", db_, "log", "head"};
  std::vector<char*> pointers;
  for (std::string& arg : argv) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_EQ(posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, pointers.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  const Result result = Collect(pid);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("partition  head"));
}

// wow projection rebuild

class ProjectionRebuildTest : public WowToolTest {
 protected:
  // Appends `brands` created brands of tenant acme; returns the entries appended.
  int Fill(int brands) {
    auto log = Log();
    for (int i = 0; i < brands; ++i) {
      Append(*log, MakeStream(Brand("acme", "b" + std::to_string(i)), 1, "eshop.BrandCreated",
                              json{{"name", "Brand " + std::to_string(i)},
                                   {"key", "brand " + std::to_string(i)}}
                                  .dump()));
    }
    return brands;
  }
  std::vector<ReadModelRow> Rows() {
    return NewSqliteReadModelStore(Db(), kContext)->List({"brands", "acme", "", "", 1000});
  }
};

TEST_F(ProjectionRebuildTest, ItDropsTheRowsAndAppliesTheWholeLogAgain) {
  const int entries = Fill(40);
  const Result first = Run({"projection", "rebuild", "catalog", "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(json::parse(first.out)["applied"], entries);
  ASSERT_EQ(Rows().size(), 40u);
  EXPECT_EQ(json::parse(Rows().front().body)["name"], "Brand 0");

  // A row no entry made goes with the rebuild.
  NewSqliteReadModelStore(Db(), kContext)->Apply("test.stray", {0, 1}, [](ReadModelWriter& w) {
    w.Put({"brands", "acme", "stray", 1, "stray", "{}"});
  });
  ASSERT_EQ(Rows().size(), 41u);
  const Result again = Run({"projection", "rebuild", "catalog"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("40 entries applied"));
  EXPECT_EQ(Rows().size(), 40u);
}

TEST_F(ProjectionRebuildTest, ALiveLeaseOrAnUnknownProjectionIsRefusedAndDropsNothing) {
  Fill(3);
  ASSERT_EQ(Run({"projection", "rebuild", "catalog"}).exit_code, 0);
  ASSERT_TRUE(Log()->AcquireLease(1, "running-node", 60s));
  const Result leased = Run({"projection", "rebuild", "catalog"});
  EXPECT_EQ(leased.exit_code, 1);
  ExpectCleanFailure(leased);
  EXPECT_THAT(leased.err, HasSubstr("leased by node running-node"));
  EXPECT_EQ(Rows().size(), 3u) << "nothing dropped";

  const Result unknown = Run({"projection", "rebuild", "orders"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("it knows: catalog"));
}

TEST_F(ProjectionRebuildTest, DrawsAProgressBarOnATerminal) {
  Fill(300);
  std::string screen;
  const Result result =
      RunOnTerminal({"projection", "rebuild", "catalog"}, "entries applied", screen);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(screen, HasSubstr("100%  300 of 300 entries"));
  EXPECT_THAT(screen, HasSubstr("\r\x1b[2K["));
}

#ifdef WOW_HAVE_MONGO
// ---------------------------------------------------------------------------------------------
// On MongoDB: the test server (a test double), or WOW_TEST_MONGODB_URI's replica set; each test
// on a database of its own, filled through the library, read by the tool through --store.

class WowToolMongoTest : public MigrateDataTest {
 protected:
  void SetUp() override {
    if (const auto real = testing_support::RealMongoUri()) {
      uri_ = *real;  // a real deployment: a database of the test's own in the URI's path
      const std::size_t hosts = uri_.find("://") + 3;
      const std::size_t path = uri_.find_first_of("/?", hosts);
      const std::string database = "/wow_test_" + NewId().substr(12);
      if (path == std::string::npos) {
        uri_ += database;
      } else if (uri_[path] == '?') {
        uri_.insert(path, database);
      } else {
        const std::size_t query = uri_.find('?', path);
        uri_.replace(path, query == std::string::npos ? std::string::npos : query - path,
                     database);
      }
      return;
    }
    if (auto reason = testing_support::MongoTestServer::Unavailable()) GTEST_SKIP() << *reason;
    uri_ = testing_support::FreshMongoTestServerUri();
  }

  // Runs `wow --store <the test's database> --context eshop-catalog args...`.
  Result RunOnMongo(std::vector<std::string> args) {
    args.insert(args.begin(), {"--store", uri_, "--context", kContext});
    return RunBare(args);
  }

  const std::shared_ptr<MongoDeployment>& Deployment() {
    if (!deployment_) deployment_ = OpenMongoDeployment(uri_);
    return deployment_;
  }
  std::unique_ptr<EventLog> MongoLog() {
    auto log = NewMongoEventLog(Deployment(), kContext, SystemClock::Instance());
    log->Create(kPartitions);
    return log;
  }
  std::unique_ptr<ReservationStore> MongoReservations() {
    return NewMongoReservationStore(Deployment(), SystemClock::Instance());
  }

  std::string uri_;
  std::shared_ptr<MongoDeployment> deployment_;
};

TEST_F(WowToolMongoTest, InitCreatesTheLogThenChecksItAndTheContextMustBeNamed) {
  Result created = RunOnMongo({"init", "--partitions", "4"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_THAT(created.out,
              HasSubstr("Created the log of context \"eshop-catalog\" with 4 partitions in "
                        "MongoDB store \"" + uri_ + "\""));
  EXPECT_EQ(NewMongoEventLog(Deployment(), kContext, SystemClock::Instance())->Open(), 4);

  Result again = RunOnMongo({"init", "--partitions", "4", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const json report = json::parse(again.out);
  EXPECT_EQ(report["created_context"], false);
  EXPECT_EQ(report["store"], uri_);
  EXPECT_FALSE(report.contains("created_file"));

  Result refused = RunOnMongo({"init", "--partitions", "8"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("has 4 partitions, not 8"));
  ExpectCleanFailure(refused);

  Result unnamed = RunBare({"--store", uri_, "log", "head"});
  EXPECT_EQ(unnamed.exit_code, 2);
  EXPECT_THAT(unnamed.err, HasSubstr("on MongoDB, name the bounded context with --context"));

  Result unknown = RunBare({"--store", uri_, "--context", "billing", "log", "head"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("has no log of context \"billing\"; create it with: wow "
                                     "--store " + uri_ + " --context billing init"));
  ExpectCleanFailure(unknown);

  Result check = RunOnMongo({"check"});
  EXPECT_EQ(check.exit_code, 2);
  EXPECT_THAT(check.err, HasSubstr("check looks into SQLite files only"));
}

TEST_F(WowToolMongoTest, LogHeadReadAndTailShowWhatTheLibraryAppended) {
  auto log = MongoLog();
  const Position first = Append(*log, MakeStream(Brand("acme", "b-1"), 1, "eshop.BrandCreated",
                                                 R"({"name":"Contoso"})"));
  const Position second = Append(*log, MakeStream(Brand("acme", "b-1"), 2, "eshop.BrandRenamed",
                                                  R"({"name":"Contoso Ltd"})"));
  Append(*log, MakeStream(Brand("acme", "b-2"), 1, "eshop.BrandCreated", R"({"name":"Fabrikam"})"));

  Result head = RunOnMongo({"log", "head", "--json"});
  ASSERT_EQ(head.exit_code, 0) << head.err;
  const json heads = json::parse(head.out);
  EXPECT_EQ(heads["partitions"], kPartitions);
  Sequence total = 0;
  for (const json& h : heads["heads"]) total += h["head"].get<Sequence>();
  EXPECT_EQ(total, 3);

  Result read = RunOnMongo({"log", "read", "--aggregate", "brand", "--tenant", "acme", "--id",
                            "b-1", "--json"});
  ASSERT_EQ(read.exit_code, 0) << read.err;
  const std::vector<json> streams = JsonLines(read.out);
  ASSERT_EQ(streams.size(), 2u);
  EXPECT_EQ(streams[0]["stream"]["version"], 1);
  EXPECT_EQ(streams[1]["stream"]["version"], 2);
  EXPECT_EQ(streams[1]["stream"]["events"][0]["type"], "eshop.BrandRenamed");
  EXPECT_EQ(streams[1]["sequence"], second.sequence);

  Result missing = RunOnMongo({"log", "read", "--aggregate", "brand", "--tenant", "acme", "--id",
                               "nobody"});
  EXPECT_EQ(missing.exit_code, 3);

  Result tail = RunOnMongo(
      {"log", "tail", "--partition", std::to_string(first.partition), "--json"});
  ASSERT_EQ(tail.exit_code, 0) << tail.err;
  const std::vector<json> entries = JsonLines(tail.out);
  ASSERT_GE(entries.size(), 2u);
  EXPECT_EQ(entries[0]["sequence"], first.sequence);
  EXPECT_EQ(entries[0]["stream"]["version"], 1);
  for (std::size_t i = 1; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i]["sequence"], entries[i - 1]["sequence"].get<Sequence>() + 1);
  }
}

TEST_F(WowToolMongoTest, ReservationsAndTimersAreFoundAndListed) {
  MongoLog();
  auto store = MongoReservations();
  ASSERT_TRUE(store->Confirm(BrandNames("acme"), "contoso", Brand("acme", "b-1"), 3));
  ASSERT_TRUE(
      store->Reserve(BrandNames("acme"), "fabrikam", Brand("acme", "b-2"), "attempt-1", 1h));

  Result found = RunOnMongo({"reservations", "find", "--aggregate", "brand", "--tenant", "acme",
                             "--namespace", kBrandNames, "--key", "contoso"});
  ASSERT_EQ(found.exit_code, 0) << found.err;
  EXPECT_THAT(found.out, HasSubstr("owner     eshop-catalog/brand/acme/b-1"));
  EXPECT_THAT(found.out, HasSubstr("version   3"));

  Result list = RunOnMongo({"--json", "reservations", "list", "--aggregate", "brand", "--tenant",
                            "acme", "--namespace", kBrandNames});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const json page = json::parse(list.out)["reservations"];
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0]["key"], "contoso");
  EXPECT_EQ(page[1]["key"], "fabrikam");
  EXPECT_EQ(page[1]["state"], "pending");

  auto timers = NewMongoTimerStore(Deployment(), kContext, kPartitions);
  Timer timer;
  timer.owner = Brand("acme", "b-2");
  timer.key = "expire";
  timer.partition = PartitionOf("acme", "b-2", kPartitions);
  timer.timer_id = "b-2/expire";
  timer.version = 1;
  timer.due_at = SystemClock::Instance()->NowMillis() - 60'000;
  timer.target = timer.owner;
  timer.command_type = "ExpireBrand";
  timer.body = R"({"reason":"test"})";
  ASSERT_TRUE(timers->Put(timer));

  Result timer_found = RunOnMongo({"timers", "find", "--aggregate", "brand", "--tenant", "acme",
                                   "--id", "b-2", "--key", "expire"});
  ASSERT_EQ(timer_found.exit_code, 0) << timer_found.err;
  EXPECT_THAT(timer_found.out, HasSubstr("timer id   b-2/expire"));
  Result due = RunOnMongo({"--json", "timers", "due"});
  ASSERT_EQ(due.exit_code, 0) << due.err;
  const json due_list = json::parse(due.out)["timers"];
  ASSERT_EQ(due_list.size(), 1u);
  EXPECT_EQ(due_list[0]["timer_id"], "b-2/expire");
}

TEST_F(WowToolMongoTest, MigrateDataKeysImportsAnExportIntoTheDeployment) {
  MongoLog();
  auto store = MongoReservations();
  ASSERT_TRUE(store->Confirm(BrandNames("acme"), "taken", Brand("acme", "b-99"), 2));
  ASSERT_TRUE(store->Confirm(BrandNames("acme"), "adventure-works", Brand("acme", "b-6"), 3));
  std::vector<std::string> args = KeysArgs(WriteExport(kSampleExport));
  args.push_back("--json");

  std::vector<std::string> dry = args;
  dry.push_back("--dry-run");
  Result preview = RunOnMongo(dry);
  EXPECT_EQ(preview.exit_code, 4) << preview.err;
  EXPECT_EQ(json::parse(preview.out)["imported"], 3);
  EXPECT_FALSE(store->Find(BrandNames("acme"), "contoso").has_value());  // nothing written

  Result first = RunOnMongo(args);
  EXPECT_EQ(first.exit_code, 4) << first.err;  // finished, with bad lines and a conflict
  const json summary = json::parse(first.out);
  EXPECT_EQ(summary["imported"], 3);
  EXPECT_EQ(summary["already_held"], 1);
  EXPECT_EQ(summary["expired"], 2);
  EXPECT_EQ(summary["conflicts"], 1);
  EXPECT_EQ(summary["bad_lines"], 3);
  const std::optional<Reservation> contoso = store->Find(BrandNames("acme"), "contoso");
  ASSERT_TRUE(contoso.has_value());
  EXPECT_EQ(contoso->owner, Brand("acme", "b-1"));
  EXPECT_EQ(contoso->version, kUnversioned);
  EXPECT_EQ(store->Find(BrandNames("acme"), "taken")->owner, Brand("acme", "b-99"));
  EXPECT_EQ(store->List(BrandNames("acme"), "", 100).size(), 5u);

  Result second = RunOnMongo(args);
  EXPECT_EQ(json::parse(second.out)["imported"], 0);
  EXPECT_EQ(json::parse(second.out)["already_held"], 4);
}

// The older version's PrepareKey collection itself, read with --from: each document as BSON (a
// date, a Long.MAX_VALUE date, an ObjectId owner, a number for an _id), imported into a SQLite
// file as an export of the same documents would be.
TEST_F(WowToolMongoTest, MigrateDataKeysReadsAPrepareKeyCollectionStraightFromMongoDB) {
  const std::size_t path = uri_.find('/', uri_.find("://") + 3);
  const std::size_t query = uri_.find('?', path);
  const std::string database = uri_.substr(path + 1, query == std::string::npos
                                                          ? std::string::npos
                                                          : query - path - 1);
  testing_support::RunMongoCommand(uri_, R"({"insert": "prepare_brand_name", "documents": [
      {"_id": "contoso", "value": {"id": "b-1", "name": "Contoso"}, "ttlAt": null},
      {"_id": "fabrikam", "value": "b-2",
       "ttlAt": {"$date": {"$numberLong": "9223372036854775807"}}},
      {"_id": "old", "value": {"id": "b-3"}, "ttlAt": {"$date": "2001-01-01T00:00:00Z"}},
      {"_id": "litware", "value": {"id": {"$oid": "65f0c0ffee0123456789abcd"}},
       "ttlAt": {"$date": "2999-01-01T00:00:00Z"}},
      {"_id": 42, "value": {"id": "b-5"}},
      {"_id": "evil\u001b[2J", "value": {"id": "b-6"}},
      {"_id": "northwind", "value": {"owner": {"id": "b-7"}}}]})",
                                   database);
  std::string from = uri_;
  from.insert(query == std::string::npos ? from.size() : query, "/prepare_brand_name");
  Log();  // the SQLite file the keys go into
  std::vector<std::string> args = {"migrate-data", "keys", "--from", from,
                                   "--namespace", kBrandNames, "--aggregate", "brand", "--tenant",
                                   "acme"};

  std::vector<std::string> dry = args;
  dry.insert(dry.end(), {"--dry-run", "--json"});
  const Result preview = Run(dry);
  EXPECT_EQ(preview.exit_code, 4) << preview.err;
  EXPECT_EQ(json::parse(preview.out)["imported"], 3) << preview.out;
  EXPECT_TRUE(All().empty()) << "a dry run writes nothing";

  const Result imported = Run(args);
  EXPECT_EQ(imported.exit_code, 4) << imported.err;  // finished, with bad documents
  EXPECT_THAT(imported.out, HasSubstr("Imported keys of " + from));
  EXPECT_THAT(imported.out, HasSubstr("documents read     7"));
  EXPECT_THAT(imported.out, HasSubstr("imported           3")) << imported.err;
  EXPECT_THAT(imported.out, HasSubstr("expired, skipped   1"));
  EXPECT_THAT(imported.out, HasSubstr("bad documents      3"));
  EXPECT_THAT(imported.err, HasSubstr("bad document, skipped: \"_id\" (the key) is not a string"));
  EXPECT_THAT(imported.err, HasSubstr("has a control character"));
  EXPECT_EQ(imported.err.find('\x1b'), std::string::npos) << imported.err;
  const std::vector<Reservation> keys = All();
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[0].key, "contoso");
  EXPECT_EQ(keys[0].owner, Brand("acme", "b-1"));
  EXPECT_EQ(keys[1].key, "fabrikam");
  EXPECT_EQ(keys[1].owner, Brand("acme", "b-2"));
  EXPECT_EQ(keys[1].version, kUnversioned);
  EXPECT_EQ(keys[2].key, "litware");
  EXPECT_EQ(keys[2].owner, Brand("acme", "65f0c0ffee0123456789abcd"));

  const Result again = Run(args);
  EXPECT_THAT(again.out, HasSubstr("already held       3"));

  const Result no_collection =
      Run({"migrate-data", "keys", "--from", uri_, "--namespace", kBrandNames,
               "--aggregate", "brand", "--tenant", "acme"});
  EXPECT_EQ(no_collection.exit_code, 2);
  EXPECT_THAT(no_collection.err, HasSubstr("--from must name a collection"));
  const Result both = Run({"migrate-data", "keys", "--from", from, "--file",
                               "x.jsonl", "--namespace", kBrandNames, "--aggregate", "brand",
                               "--tenant", "acme"});
  EXPECT_EQ(both.exit_code, 2);
  const Result unreachable = Run(
      {"migrate-data", "keys", "--from",
       "mongodb://someone:secret@127.0.0.1:1/old/prepare?serverSelectionTimeoutMS=300",
       "--namespace", kBrandNames, "--aggregate", "brand", "--tenant", "acme"});
  EXPECT_EQ(unreachable.exit_code, 1);
  EXPECT_THAT(unreachable.err, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(unreachable.err, Not(HasSubstr("secret")));
}

TEST_F(WowToolMongoTest, ProjectionRebuildAppliesTheWholeLogToTheDeploymentsReadModels) {
  auto log = MongoLog();
  for (int i = 0; i < 12; ++i) {
    Append(*log, MakeStream(Brand("acme", "b" + std::to_string(i)), 1, "eshop.BrandCreated",
                            json{{"name", "Brand " + std::to_string(i)},
                                 {"key", "brand " + std::to_string(i)}}
                                .dump()));
  }
  const Result rebuilt = RunOnMongo({"projection", "rebuild", "catalog", "--json"});
  ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.err;
  EXPECT_EQ(json::parse(rebuilt.out)["applied"], 12);
  const auto rows = NewMongoReadModelStore(Deployment(), kContext)
                        ->List({"brands", "acme", "", "", 1000});
  EXPECT_EQ(rows.size(), 12u);
}

TEST_F(WowToolMongoTest, AnUnreachableDeploymentIsAFailureThatSaysSo) {
  Result result =
      RunBare({"--store", "mongodb://someone:secret@127.0.0.1:1/wow?serverSelectionTimeoutMS=300",
               "--context", kContext, "log", "head"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(result.err, Not(HasSubstr("secret")));
  ExpectCleanFailure(result);
}
#endif  // WOW_HAVE_MONGO

}  // namespace
}  // namespace wow
