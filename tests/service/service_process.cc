#include "service_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "wow/event_log.h"
#include "wow/store_set.h"

namespace wow::service_test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// How long a service may take to start; generous for sanitizer builds on a busy machine.
constexpr milliseconds kStartTimeout{60'000};

// The binary the tests start: $WOW_CATALOG_BINARY when set (to hold another build to the same
// tests), else the one built beside them.
std::string BinaryPath() {
  const char* path = std::getenv("WOW_CATALOG_BINARY");
  return path != nullptr && *path != '\0' ? path : WOW_CATALOG_BINARY;
}

// Forks and execs the service binary with `args` (argv[0] excluded), its stdout on `out_fd`
// (or the log) and its stderr on the file `log_path`. Returns the child's pid.
pid_t Spawn(const std::vector<std::string>& args, int out_fd, const std::string& log_path) {
  std::vector<std::string> full = {BinaryPath()};
  full.insert(full.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : full) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return -1;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    dup2(out_fd >= 0 ? out_fd : log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log_fd);
  return pid;
}

std::optional<int> WaitFor(pid_t pid, milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0) return std::nullopt;
    if (SteadyClock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(milliseconds(5));
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

ServiceProcess::ServiceProcess(std::string db, std::vector<std::string> extra) {
  // The log lives in /tmp: the database's directory may not exist yet (the service makes it).
  char log_path[] = "/tmp/wow-catalog-service-XXXXXX";
  const int log_fd = mkstemp(log_path);
  if (log_fd >= 0) close(log_fd);
  log_path_ = log_path;
  std::vector<std::string> args = {"--store", db, "--listen", "127.0.0.1:0"};
  args.insert(args.end(), extra.begin(), extra.end());
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2 failed";
    return;
  }
  pid_ = Spawn(args, out[1], log_path_);
  close(out[1]);
  if (pid_ <= 0) {
    close(out[0]);
    ADD_FAILURE() << "cannot start " << BinaryPath();
    return;
  }
  // Read stdout until the line saying where it listens.
  std::string printed;
  const auto deadline = SteadyClock::now() + kStartTimeout;
  static const std::regex kListening(R"(listening on http://127\.0\.0\.1:(\d+) )");
  std::smatch match;
  while (!std::regex_search(printed, match, kListening)) {
    const auto left =
        std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now()).count();
    pollfd fd{out[0], POLLIN, 0};
    if (left <= 0 || poll(&fd, 1, static_cast<int>(left)) <= 0) break;
    char buffer[512];
    const ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    printed.append(buffer, static_cast<size_t>(n));
  }
  close(out[0]);  // the service prints nothing more; it ignores SIGPIPE
  if (!std::regex_search(printed, match, kListening)) {
    ADD_FAILURE() << "the service did not say where it listens; stdout: " << printed
                  << "\nstderr: " << Log();
    Kill();
    return;
  }
  port_ = std::stoi(match[1]);
}

ServiceProcess::~ServiceProcess() {
  Kill();
  unlink(log_path_.c_str());
}

void ServiceProcess::Signal(int signal) const {
  if (pid_ > 0) kill(pid_, signal);
}

std::optional<int> ServiceProcess::Wait(milliseconds timeout) {
  if (pid_ <= 0) return std::nullopt;
  std::optional<int> status = WaitFor(pid_, timeout);
  if (status) pid_ = -1;
  return status;
}

void ServiceProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string ServiceProcess::Log() const { return ReadFile(log_path_); }

int ServiceProcess::RunToExit(const std::vector<std::string>& args, std::string& log,
                              milliseconds timeout) {
  char path[] = "/tmp/wow-catalog-run-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return -1;
  close(fd);
  const pid_t pid = Spawn(args, -1, path);
  std::optional<int> status = pid > 0 ? WaitFor(pid, timeout) : std::nullopt;
  if (pid > 0 && !status) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  log = ReadFile(path);
  unlink(path);
  if (!status || !WIFEXITED(*status)) return -1;
  return WEXITSTATUS(*status);
}

std::string Reply::Header(const std::string& name) const {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  auto it = headers.find(lower);
  return it == headers.end() ? "" : it->second;
}

std::string Reply::Describe() const {
  return status == 0 ? "no response: " + error : std::to_string(status) + " " + body;
}

Reply Send(int port, const std::string& method, const std::string& path, const std::string& body,
           const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string request = method + " " + path +
                        " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                        "\r\nConnection: close\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  if (!body.empty() || method == "POST" || method == "PUT") {
    request +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n" + body;
  return SendRaw(port, request);
}

Reply SendRaw(int port, const std::string& request) {
  Reply reply;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    reply.error = "connect failed";
    return reply;
  }
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  // Read until the server closes the connection or the body of Content-Length is complete.
  static const std::regex kLength(R"(\r\nContent-Length: *(\d+)\r\n)", std::regex::icase);
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) {
    response.append(buffer, static_cast<size_t>(n));
    const size_t end = response.find("\r\n\r\n");
    std::smatch length;
    const std::string head = end == std::string::npos ? "" : response.substr(0, end + 2);
    if (end != std::string::npos && std::regex_search(head, length, kLength) &&
        response.size() >= end + 4 + std::stoul(length[1])) {
      break;
    }
  }
  close(fd);
  static const std::regex kStatus(R"(^HTTP/1\.[01] (\d{3}))");
  std::smatch match;
  if (!std::regex_search(response, match, kStatus)) {
    reply.error = "no status line in: " + response;
    return reply;
  }
  const size_t body = response.find("\r\n\r\n");
  std::smatch length;
  const std::string head = response.substr(0, body == std::string::npos ? body : body + 2);
  if (body == std::string::npos || (std::regex_search(head, length, kLength) &&
                                    response.size() < body + 4 + std::stoul(length[1]))) {
    reply.error = "the response ends early: " + response;
    return reply;
  }
  reply.status = std::stoi(match[1]);
  if (body != std::string::npos) reply.body = response.substr(body + 4);
  static const std::regex kHeader(R"(\r\n([^:\r\n]+): *([^\r\n]*))");
  for (auto it = std::sregex_iterator(head.begin(), head.end(), kHeader);
       it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1];
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    reply.headers.emplace(name, (*it)[2]);
  }
  reply.json = nlohmann::json::parse(reply.body, nullptr, false);
  return reply;
}

std::string PercentEncode(const std::string& text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

LogSummary ReadLog(const std::string& db, const std::string& aggregate, const std::string& tenant) {
  LogSummary summary;
  const StoreSet stores = OpenStores(db, "eshop-catalog");
  const std::shared_ptr<EventLog>& log = stores.log();
  const int partitions = stores.partitions();
  for (int p = 0; p < partitions; ++p) {
    Sequence after = 0;
    for (;;) {
      const std::vector<Entry> entries = log->ReadAfter(p, after, 1000);
      if (entries.empty()) break;
      for (const Entry& entry : entries) {
        after = entry.position.sequence;
        ++summary.streams;
        const Stream& stream = entry.stream;
        if (stream.ref.aggregate != aggregate || stream.ref.tenant_id != tenant) continue;
        for (const EventRecord& event : stream.events) {
          const auto body = nlohmann::json::parse(event.body, nullptr, false);
          if (body.is_object() && body.contains("name")) {
            summary.names[stream.ref.id] = body["name"].get<std::string>();
          }
        }
      }
    }
  }
  return summary;
}

}  // namespace wow::service_test
