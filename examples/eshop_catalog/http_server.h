// HttpServer: the catalog's HTTP/1.1 server, event-driven on Boost.Asio and Boost.Beast, for
// clients that may be hostile. A few I/O threads read and write every connection; handlers run
// on a separate pool of worker threads (they block on the store), so no connection, slow or
// idle, holds a thread while it sends nothing.
//
// What it holds against:
//   - slow and idle clients: a connection has deadlines, each counted from where its phase began
//     and not moved by a trickle of bytes: the request line and the whole head from the request's
//     first byte, the body from the end of the head, a response's write, and the idle time before
//     a request's first byte. At a deadline the connection is closed without an answer.
//   - too many connections: beyond max_connections a new connection gets 503 and is closed.
//   - large requests: a head over max_header_bytes (431), more than max_header_count fields
//     (431), a target over max_target_bytes (414), a body over max_body_bytes (413, before
//     reading it) are answered at once; a connection holds at most a head and a body in memory.
//   - ambiguous requests: the head is checked strictly (http_head.h) before Beast's parser reads
//     it; a refusal answers 400 (or 414, 431, 501, 505) and closes the connection.
// Requests on one connection, pipelined or not, are answered in order, one at a time. A refused
// request's connection is closed after its answer, reading (and discarding) what the client
// still sends for a moment so that the client reads the answer rather than a reset.
//
// Thread-safety: Listen, then Run on one thread; Stop is safe from any thread, any time.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http_message.h"

namespace eshop {

struct HttpServerOptions {
  int io_threads = 1;       // threads reading and writing connections
  int worker_threads = 64;  // threads running handlers; a handler blocks one while it runs
  std::size_t max_connections = 10'000;
  std::size_t max_header_bytes = 16 * 1024;  // the request line and the fields
  std::size_t max_header_count = 100;
  std::size_t max_target_bytes = 8 * 1024;
  std::size_t max_body_bytes = 64 * 1024;
  std::chrono::milliseconds request_line_timeout{5'000};  // from a request's first byte
  std::chrono::milliseconds header_timeout{10'000};       // from a request's first byte
  std::chrono::milliseconds body_timeout{10'000};         // from the end of the head
  std::chrono::milliseconds idle_timeout{5'000};          // before a request's first byte arrives
  std::chrono::milliseconds write_timeout{10'000};        // to write one response
  int backlog = 1024;                                     // of the listening socket
};

// Answers a request; runs on a worker thread. Exceptions become 500.
using HttpHandler = std::function<HttpReply(const HttpRequest&)>;
// Told of every answer, the server's own refusals included: the method as sent ("" when the
// request line had none) and the status. Runs on an I/O thread; must not block.
using HttpObserver = std::function<void(std::string_view method, int status)>;

class HttpServer {
 public:
  // REQUIRES: `handler` is set; the options' counts and sizes are positive.
  HttpServer(HttpServerOptions options, HttpHandler handler, HttpObserver observer = {});
  ~HttpServer();  // stops, then waits for the worker threads

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens on `host`:`port` (port 0: a free one) and returns the port. A port another socket
  // listens on is refused, not shared. Raises the process's soft limit on open files toward its
  // hard limit when max_connections needs it (and lowers max_connections, with a warning, when
  // the hard limit is too low). Throws std::system_error when the address cannot be bound.
  int Listen(const std::string& host, int port);

  // Serves until Stop, then returns once every connection has ended: requests in flight are
  // answered (with Connection: close), idle connections are closed. REQUIRES: Listen succeeded.
  void Run();

  // Stops accepting and ends the connections as Run says. Idempotent; before Run, Run returns at
  // once.
  void Stop();

  class Impl;  // in http_server.cc; named there by the connections

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace eshop
