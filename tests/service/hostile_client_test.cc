// The catalog service against hostile and careless clients, over raw sockets on loopback: slow
// and idle connections, oversized and ambiguous requests, pipelining, HTTP versions, metric
// labels. Each test bounds its connections and its time.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <thread>

#include "service_process.h"
#include "support/temp_dir.h"

namespace wow::service_test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// A client connection that sends exactly the bytes it is given. Closes its socket when destroyed.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  // Sends all of `bytes`; false when the connection refuses them.
  bool Send(std::string_view bytes) {
    for (size_t sent = 0; sent < bytes.size();) {
      const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads what arrives within `timeout` into the buffer; false when the peer closed (or reset)
  // the connection.
  bool Receive(milliseconds timeout) {
    pollfd fd{fd_, POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(timeout.count())) <= 0) return true;
    char buffer[16384];
    const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    received_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  // The next whole response in what arrived (waiting up to `timeout` for it); its status is 0
  // when none arrived.
  Reply NextResponse(milliseconds timeout = milliseconds(5'000)) {
    const auto deadline = SteadyClock::now() + timeout;
    for (;;) {
      const size_t end = received_.find("\r\n\r\n");
      if (end != std::string::npos) {
        static const std::regex kLength(R"(\r\ncontent-length: *(\d+)\r\n)", std::regex::icase);
        const std::string head = received_.substr(0, end + 2);
        std::smatch length;
        const size_t body = std::regex_search(head, length, kLength) ? std::stoul(length[1]) : 0;
        if (received_.size() >= end + 4 + body) {
          Reply reply;
          if (received_.rfind("HTTP/1.1 ", 0) != 0 || received_.size() < 12) {
            reply.error = "not a response: " + received_.substr(0, 200);
            return reply;
          }
          reply.status = std::atoi(received_.substr(9, 3).c_str());
          reply.body = received_.substr(end + 4, body);
          reply.json = nlohmann::json::parse(reply.body, nullptr, false);
          static const std::regex kHeader(R"(\r\n([^:\r\n]+): *([^\r\n]*))");
          for (auto it = std::sregex_iterator(head.begin(), head.end(), kHeader);
               it != std::sregex_iterator(); ++it) {
            std::string name = (*it)[1];
            for (char& c : name) c = static_cast<char>(std::tolower(c));
            reply.headers.emplace(name, (*it)[2]);
          }
          received_.erase(0, end + 4 + body);
          return reply;
        }
      }
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
      if (left.count() <= 0 || !Receive(left)) return Reply{0, {}, {}, {}, "no response"};
    }
  }

  // Whether the server closes the connection within `timeout` (what else arrives is kept).
  bool ClosedWithin(milliseconds timeout) {
    const auto deadline = SteadyClock::now() + timeout;
    while (SteadyClock::now() < deadline) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
      if (!Receive(left)) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  std::string received_;
};

// Raises this process's soft limit on open files to `wanted` (or the hard limit); the service
// started afterwards inherits it. Returns the limit in force.
rlim_t RaiseOpenFiles(rlim_t wanted) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < wanted) {
    limit.rlim_cur = std::min(wanted, limit.rlim_max);
    setrlimit(RLIMIT_NOFILE, &limit);
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur;
}

// The resident set of process `pid` in KiB (VmRSS in /proc/PID/status); -1 when unreadable.
long ResidentKib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

class HostileClients : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> flags = {}) {
    flags.insert(flags.begin(), {"--synchronous", "off"});
    service_ = std::make_unique<ServiceProcess>(dir_.File("catalog.db"), flags);
    ASSERT_GT(service_->port(), 0);
  }
  void TearDown() override {
    if (HasFailure() && service_) std::cerr << "service log:\n" << service_->Log() << "\n";
  }
  int port() const { return service_->port(); }

  // One request on a fresh connection; the reply and how long it took.
  std::pair<Reply, milliseconds> Timed(const std::string& request, milliseconds timeout) {
    const auto start = SteadyClock::now();
    RawConnection connection(port());
    Reply reply;
    if (connection.connected() && connection.Send(request))
      reply = connection.NextResponse(timeout);
    return {reply, std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start)};
  }

  testing_support::TempDir dir_;
  std::unique_ptr<ServiceProcess> service_;
};

const std::string kHealth = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

TEST_F(HostileClients, AThousandTricklingConnectionsDoNotStallANormalRequest) {
  // 1,000 connections and the service's own descriptors fit in 2,048; with a lower hard limit
  // the test trickles on fewer connections (each still far more than the worker threads).
  const rlim_t limit = RaiseOpenFiles(2'048 + 64);
  const size_t trickling = limit >= 2'048 ? 1'000 : static_cast<size_t>(limit / 2 - 64);
  ASSERT_GE(trickling, 128u) << "too few open files to trickle (ulimit -n " << limit << ")";
  Start();
  std::vector<std::unique_ptr<RawConnection>> connections;
  for (size_t i = 0; i < trickling; ++i) {
    connections.push_back(std::make_unique<RawConnection>(port()));
    ASSERT_TRUE(connections.back()->connected()) << "connection " << i;
  }
  // A byte a second each, for 3 seconds, while normal requests are timed.
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  std::jthread trickle([&](std::stop_token stop) {
    for (size_t byte = 0; byte < 4 && !stop.stop_requested(); ++byte) {
      for (auto& connection : connections) connection->Send(request.substr(byte, 1));
      std::this_thread::sleep_for(milliseconds(1'000));
    }
  });
  const auto until = SteadyClock::now() + milliseconds(3'000);
  int answered = 0;
  while (SteadyClock::now() < until) {
    const auto [reply, took] = Timed(kHealth, milliseconds(2'000));
    EXPECT_EQ(reply.status, 200) << reply.Describe();
    EXPECT_LT(took.count(), 1'000) << "a request waited behind the trickling connections";
    if (reply.status != 200 || took.count() >= 1'000) break;
    ++answered;
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_GE(answered, 10);
}

TEST_F(HostileClients, IdleAndSlowConnectionsAreClosedAtTheirDeadlines) {
  Start({"--idle-timeout-ms", "1000", "--request-line-timeout-ms", "1000", "--header-timeout-ms",
         "2000", "--body-timeout-ms", "1000"});
  const auto start = SteadyClock::now();
  auto since = [&] {
    return std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start).count();
  };
  // Idle from the start, and idle after an answer (kept alive).
  RawConnection idle(port());
  RawConnection kept(port());
  ASSERT_TRUE(kept.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(kept.NextResponse().status, 200);
  // A request line that never ends, a head that never ends, a body that never ends; each
  // trickles a byte every 200 ms, which moves no deadline.
  RawConnection line(port());
  RawConnection head(port());
  RawConnection body(port());
  ASSERT_TRUE(head.Send("GET /healthz HTTP/1.1\r\n"));
  ASSERT_TRUE(
      body.Send("POST /tenants/acme/brands HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"));
  std::jthread trickle([&](std::stop_token stop) {
    for (int i = 0; i < 20 && !stop.stop_requested(); ++i) {
      line.Send("G");
      head.Send("X");
      body.Send("{");
      std::this_thread::sleep_for(milliseconds(200));
    }
  });
  EXPECT_TRUE(idle.ClosedWithin(milliseconds(2'500)));
  EXPECT_GE(since(), 900);
  EXPECT_TRUE(kept.ClosedWithin(milliseconds(500)));
  EXPECT_TRUE(line.ClosedWithin(milliseconds(500)));
  EXPECT_TRUE(body.ClosedWithin(milliseconds(500)));
  const long early = since();
  EXPECT_LT(early, 2'500);
  EXPECT_TRUE(head.ClosedWithin(milliseconds(2'000)));
  EXPECT_GE(since(), 1'900) << "the head's deadline is 2 s from its first byte";
  EXPECT_LT(since(), 3'500);
  // The service still answers.
  EXPECT_EQ(Timed(kHealth, milliseconds(2'000)).first.status, 200);
}

TEST_F(HostileClients, RequestsOverTheLimitsAreRefusedAtOnceAndMemoryStaysPut) {
  Start();
  ASSERT_EQ(Timed(kHealth, milliseconds(2'000)).first.status, 200);
  const long resting = ResidentKib(service_->pid());
  ASSERT_GT(resting, 0);

  // 100 MB of header lines, sent while no answer has come.
  {
    RawConnection connection(port());
    ASSERT_TRUE(connection.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
    const std::string lines = [] {
      std::string chunk;
      while (chunk.size() < 64 * 1024) chunk += "X-Filler: " + std::string(100, 'f') + "\r\n";
      return chunk;
    }();
    fcntl(connection.fd(), F_SETFL, fcntl(connection.fd(), F_GETFL) | O_NONBLOCK);
    size_t sent = 0;
    pollfd fd{connection.fd(), POLLIN, 0};
    while (sent < 100'000'000 && poll(&fd, 1, 0) == 0) {
      const ssize_t n = send(connection.fd(), lines.data(), lines.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN) break;
      if (n < 0) std::this_thread::sleep_for(milliseconds(1));
      sent += n > 0 ? static_cast<size_t>(n) : 0;
    }
    fcntl(connection.fd(), F_SETFL, fcntl(connection.fd(), F_GETFL) & ~O_NONBLOCK);
    EXPECT_LT(sent, 10'000'000u) << "the answer came only after " << sent << " bytes";
    const Reply reply = connection.NextResponse();
    EXPECT_EQ(reply.status, 431) << reply.Describe();
    EXPECT_EQ(reply.json.value("code", ""), "HEADERS_TOO_LARGE") << reply.Describe();
    EXPECT_TRUE(connection.ClosedWithin(milliseconds(3'000)));
  }
  // Too many fields, each small.
  {
    std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
    for (int i = 0; i < 500; ++i) request += "X-" + std::to_string(i) + ": y\r\n";
    const Reply reply = Timed(request + "\r\n", milliseconds(2'000)).first;
    EXPECT_EQ(reply.status, 431) << reply.Describe();
  }
  // A body announced over the limit is refused before it is sent.
  {
    RawConnection connection(port());
    ASSERT_TRUE(connection.Send(
        "POST /tenants/acme/brands HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n{"));
    const Reply reply = connection.NextResponse(milliseconds(2'000));
    EXPECT_EQ(reply.status, 413) << reply.Describe();
    EXPECT_EQ(reply.json.value("code", ""), "BODY_TOO_LARGE") << reply.Describe();
  }
  // A chunked body over the limit too.
  {
    RawConnection connection(port());
    ASSERT_TRUE(connection.Send(
        "POST /tenants/acme/brands HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
    const std::string chunk = "8000\r\n" + std::string(0x8000, 'x') + "\r\n";
    for (int i = 0; i < 4; ++i) connection.Send(chunk);
    const Reply reply = connection.NextResponse(milliseconds(2'000));
    EXPECT_EQ(reply.status, 413) << reply.Describe();
  }
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(Timed(kHealth, milliseconds(2'000)).first.status, 200);
  const long after = ResidentKib(service_->pid());
  EXPECT_LT(after - resting, 8 * 1024)
      << "resting " << resting << " KiB, after " << after << " KiB";
}

TEST_F(HostileClients, ConnectionsOverTheLimitGet503AndAreClosed) {
  Start({"--max-connections", "40"});
  {
    std::vector<std::unique_ptr<RawConnection>> held;
    for (int i = 0; i < 40; ++i) held.push_back(std::make_unique<RawConnection>(port()));
    std::this_thread::sleep_for(milliseconds(200));
    RawConnection extra(port());
    const Reply reply = extra.NextResponse(milliseconds(2'000));
    EXPECT_EQ(reply.status, 503) << reply.Describe();
    EXPECT_TRUE(extra.ClosedWithin(milliseconds(1'000)));
  }
  // Once the held connections are gone (the service sees them close), new ones are served.
  int status = 0;
  for (int i = 0; i < 20 && status != 200; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    status = Timed(kHealth, milliseconds(2'000)).first.status;
  }
  EXPECT_EQ(status, 200);
}

TEST_F(HostileClients, AmbiguousMessageLengthsAndMalformedFieldsAre400AndCloseTheConnection) {
  Start();
  const std::string post = "POST /tenants/acme/brands HTTP/1.1\r\nHost: x\r\n";
  const std::string body = R"({"name": "Contoso"})";
  const std::string length = "Content-Length: " + std::to_string(body.size()) + "\r\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"two different Content-Lengths", post + length + "Content-Length: 5\r\n\r\n" + body},
      {"two equal Content-Lengths", post + length + length + "\r\n" + body},
      {"a list of lengths", post + "Content-Length: 19, 19\r\n\r\n" + body},
      {"a signed length", post + "Content-Length: +19\r\n\r\n" + body},
      {"a negative length", post + "Content-Length: -1\r\n\r\n" + body},
      {"a hex length", post + "Content-Length: 0x13\r\n\r\n" + body},
      {"an empty length", post + "Content-Length: \r\n\r\n" + body},
      {"a length with chunked",
       post + length + "Transfer-Encoding: chunked\r\n\r\n13\r\n" + body + "\r\n0\r\n\r\n"},
      {"chunked with a length",
       post + "Transfer-Encoding: chunked\r\n" + length + "\r\n13\r\n" + body + "\r\n0\r\n\r\n"},
      {"chunked not last", post + "Transfer-Encoding: chunked, gzip\r\n\r\n" + body},
      {"two Transfer-Encodings",
       post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
      {"a malformed chunk", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n" + body + "\r\n"},
      {"a header line without a colon", post + length + "X-Broken\r\n\r\n" + body},
      {"space before a colon", post + "Content-Length : 19\r\n\r\n" + body},
      {"a folded line", post + length + "X-Folded: a\r\n b\r\n\r\n" + body},
      {"a NUL in a value", post + length + std::string("Idempotency-Key: a\0b\r\n\r\n", 24) + body},
      {"a bare CR in a value", post + length + "X-Cr: a\rb\r\n\r\n" + body},
      {"no Host", "GET /healthz HTTP/1.1\r\n\r\n"},
      {"two Hosts", "GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"},
      {"a space in the target", "GET /heal thz HTTP/1.1\r\nHost: x\r\n\r\n"},
  };
  for (const auto& [what, request] : cases) {
    SCOPED_TRACE(what);
    RawConnection connection(port());
    ASSERT_TRUE(connection.Send(request));
    const Reply reply = connection.NextResponse(milliseconds(3'000));
    EXPECT_EQ(reply.status, 400) << reply.Describe();
    EXPECT_EQ(reply.json.value("code", ""), "BAD_REQUEST") << reply.Describe();
    EXPECT_TRUE(connection.ClosedWithin(milliseconds(3'000))) << "the connection stays open";
  }
  const Reply holder = Send(port(), "GET", "/tenants/acme/brand-names/contoso");
  EXPECT_EQ(holder.status, 404) << "a refused request wrote nothing: " << holder.Describe();
}

TEST_F(HostileClients, PipelinedRequestsAreAnsweredInOrder) {
  Start();
  auto create = [](const std::string& name, bool last) {
    const std::string body = R"({"name": ")" + name + R"("})";
    return "POST /tenants/acme/brands HTTP/1.1\r\nHost: x\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n" + (last ? "Connection: close\r\n" : "") + "\r\n" +
           body;
  };
  RawConnection connection(port());
  ASSERT_TRUE(connection.Send(create("First", false) + kHealth.substr(0, kHealth.find("Conn")) +
                              "\r\n" + create("Second", false) + create("Third", true)));
  const Reply first = connection.NextResponse();
  const Reply health = connection.NextResponse();
  const Reply second = connection.NextResponse();
  const Reply third = connection.NextResponse();
  EXPECT_EQ(first.status, 201) << first.Describe();
  EXPECT_EQ(first.json.value("name", ""), "First");
  EXPECT_EQ(health.status, 200) << health.Describe();
  EXPECT_EQ(second.json.value("name", ""), "Second") << second.Describe();
  EXPECT_EQ(third.json.value("name", ""), "Third") << third.Describe();
  EXPECT_TRUE(connection.ClosedWithin(milliseconds(2'000)));
}

TEST_F(HostileClients, RangeIsIgnoredHttp10IsRefusedAndAnEmptyIdempotencyKeyIs400) {
  Start();
  const Reply ranged =
      SendRaw(port(),
              "GET /healthz HTTP/1.1\r\nHost: x\r\nRange: bytes=0-3\r\nConnection: "
              "close\r\n\r\n");
  EXPECT_EQ(ranged.status, 200) << ranged.Describe();
  EXPECT_EQ(ranged.body, R"({"status":"ok"})");
  EXPECT_EQ(ranged.Header("Content-Range"), "");

  for (const std::string version : {"HTTP/1.0", "HTTP/2.0", "HTTP/0.9"}) {
    SCOPED_TRACE(version);
    const Reply old = SendRaw(port(), "GET /healthz " + version + "\r\nHost: x\r\n\r\n");
    EXPECT_EQ(old.status, 505) << old.Describe();
    EXPECT_EQ(old.json.value("code", ""), "HTTP_VERSION_NOT_SUPPORTED") << old.Describe();
  }

  const Reply empty = Send(port(), "POST", "/tenants/acme/brands", R"({"name": "Contoso"})",
                           {{"Idempotency-Key", ""}});
  EXPECT_EQ(empty.status, 400) << empty.Describe();
  EXPECT_EQ(empty.json.value("code", ""), "INVALID_IDEMPOTENCY_KEY") << empty.Describe();
  EXPECT_EQ(Send(port(), "GET", "/tenants/acme/brand-names/contoso").status, 404);
}

TEST_F(HostileClients, OptionsAnswers204WithAllowAndNoContentLength) {
  Start();
  RawConnection connection(port());
  ASSERT_TRUE(
      connection.Send("OPTIONS /tenants/acme/brands HTTP/1.1\r\nHost: x\r\n\r\n" + kHealth));
  const Reply options = connection.NextResponse();
  EXPECT_EQ(options.status, 204) << options.Describe();
  EXPECT_EQ(options.Header("Allow"), "GET, HEAD, POST, OPTIONS");
  EXPECT_EQ(options.headers.count("content-length"), 0u) << "a 204 has no Content-Length";
  EXPECT_EQ(connection.NextResponse().status, 200) << "the next request follows the 204";
}

TEST_F(HostileClients, MetricLabelsComeFromAFixedSet) {
  Start();
  for (int i = 0; i < 50; ++i) {
    const Reply reply = SendRaw(port(), "INVENTED" + std::to_string(i) +
                                            " /healthz HTTP/1.1\r\nHost: x\r\nConnection: "
                                            "close\r\n\r\n");
    EXPECT_EQ(reply.status, 405) << reply.Describe();
  }
  const Reply metrics = Send(port(), "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.body.find("INVENTED"), std::string::npos) << metrics.body;
  EXPECT_NE(
      metrics.body.find("wow_catalog_http_requests_total{method=\"other\",status=\"405\"} 50\n"),
      std::string::npos)
      << metrics.body;
}

}  // namespace
}  // namespace wow::service_test
