// Helpers of the SQLite backend's tests: streams to append, errors to inspect, the file's bytes,
// raw SQLite access to the file (to damage or inspect it behind the backend's back), and child
// processes bounded in time.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "wow/error.h"
#include "wow/stream.h"

namespace wow::sqlite_test {

inline constexpr const char* kContext = "shop";
inline constexpr int kPartitions = 4;

inline AggregateRef Ref(const std::string& id, const std::string& aggregate = "brand") {
  return {kContext, aggregate, "t1", id};
}

// A valid stream of `ref` at `version`, with a request id of its own and `transport_bytes` of
// transport.
inline Stream MakeStream(const AggregateRef& ref, Version version, size_t transport_bytes = 16) {
  Stream stream;
  stream.ref = ref;
  stream.version = version;
  stream.request_id = "req-" + ref.aggregate + "/" + ref.id + "@" + std::to_string(version);
  stream.events = {{"created", R"({"name":"acme","price":12.5})"}};
  stream.reserved = {{"shop.brand-name", "acme-" + ref.id, ReservationTenancy::kTenant}};
  stream.time = 1'700'000'000'000 + version;
  stream.transport = std::string(transport_bytes, 'x');
  return stream;
}

struct Failure {
  ErrorCode code;
  std::string message;
};

// The wow::Error `call` throws; nullopt when it throws none.
template <typename Call>
std::optional<Failure> FailureOf(Call&& call) {
  try {
    call();
  } catch (const Error& e) {
    return Failure{e.code(), e.what()};
  }
  return std::nullopt;
}

inline std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A raw connection to the file, bypassing the backend.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
      throw std::runtime_error("raw open of " + path + " failed: " + sqlite3_errmsg(db_));
    }
    sqlite3_busy_timeout(db_, 5000);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void Exec(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      std::string text = message ? message : "";
      sqlite3_free(message);
      throw std::runtime_error("raw \"" + sql + "\" failed: " + text);
    }
  }

  // The first column of the first row of `sql`, as text ("" when there is no row).
  std::string Text(const std::string& sql) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
      throw std::runtime_error("raw prepare of \"" + sql + "\" failed: " + sqlite3_errmsg(db_));
    }
    std::string result;
    if (sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_text(statement, 0) != nullptr) {
      result = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    }
    sqlite3_finalize(statement);
    return result;
  }

 private:
  sqlite3* db_ = nullptr;
};

// Creates and registers the reservation table of `context` and `aggregate` in the file at `path`
// (whose format record exists) as earlier builds created it: WITHOUT ROWID, keyed by the key.
// Files written then keep such tables, and the stores must use them as their own.
inline void CreateEarlierReservationTable(const std::string& path, const std::string& context,
                                          const std::string& aggregate) {
  const std::string name = "wow_reservation__" + context + "__" + aggregate;
  RawDb raw(path);
  raw.Exec(
      "CREATE TABLE \"" + name +
      "\" (tenant_id TEXT NOT NULL, ns TEXT NOT NULL, key TEXT NOT NULL, owner_tenant_id TEXT "
      "NOT NULL, owner_id TEXT NOT NULL, expires_at INTEGER, holds TEXT NOT NULL, version "
      "INTEGER, PRIMARY KEY (tenant_id, ns, key)) WITHOUT ROWID; INSERT INTO wow_tables (name, "
      "kind, context, aggregate, format) VALUES ('" +
      name + "', 'reservation', '" + context + "', '" + aggregate + "', 3)");
}

// Forks a child that runs `body` and exits with what it returns (1 when it throws). The child
// must not use any SQLite connection the parent had open before the fork: open its own.
inline pid_t ForkChild(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int code = 1;
    try {
      code = body();
    } catch (const std::exception& e) {
      fprintf(stderr, "child %d: %s\n", getpid(), e.what());
    } catch (...) {
    }
    _exit(code);
  }
  return pid;
}

// Waits for `pids` until `timeout`; kills those still running then. Returns each exit status
// (the exit code, or -1 for a child killed or stopped by a signal).
inline std::vector<int> WaitChildren(const std::vector<pid_t>& pids,
                                     std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<int> codes(pids.size(), -2);
  size_t left = pids.size();
  while (left > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (codes[i] != -2) continue;
      int status = 0;
      if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        --left;
      }
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (size_t i = 0; i < pids.size(); ++i) {
        if (codes[i] != -2) continue;
        ADD_FAILURE() << "child " << pids[i] << " still runs after " << timeout.count()
                      << " ms; killed";
        kill(pids[i], SIGKILL);
        waitpid(pids[i], nullptr, 0);
        codes[i] = -1;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return codes;
}

// A pipe a parent uses to start its children together, or a child to report to its parent.
class Pipe {
 public:
  Pipe() {
    if (pipe(fds_) != 0) throw std::runtime_error("pipe failed");
  }
  ~Pipe() {
    close(fds_[0]);
    close(fds_[1]);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  void Write(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = write(fds_[1], bytes.data() + done, bytes.size() - done);
      if (n <= 0) throw std::runtime_error("write to pipe failed");
      done += static_cast<size_t>(n);
    }
  }
  // Reads `size` bytes, waiting at most `timeout` in all; fewer when the time is up or the
  // writers closed their ends.
  std::string Read(size_t size, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string bytes(size, '\0');
    size_t done = 0;
    while (done < size) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd readable{fds_[0], POLLIN, 0};
      if (left.count() <= 0 || poll(&readable, 1, static_cast<int>(left.count())) <= 0) break;
      const ssize_t n = read(fds_[0], bytes.data() + done, size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    bytes.resize(done);
    return bytes;
  }

 private:
  int fds_[2];
};

}  // namespace wow::sqlite_test
