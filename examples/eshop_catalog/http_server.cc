#include "http_server.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <vector>

#include "http_head.h"

namespace eshop {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using Executor = asio::strand<asio::io_context::executor_type>;

// How long, and how much, a refused request's connection is read (and discarded) after its
// answer, so that the client reads the answer instead of a reset.
constexpr std::chrono::milliseconds kLingerTime{2'000};
constexpr std::size_t kLingerBytes = 1 << 20;
constexpr std::size_t kReadChunk = 4096;
// The request line's bytes besides its target: method, spaces, version.
constexpr std::size_t kRequestLineSlack = 64;

// What a connection over max_connections gets before it is closed.
const std::string& OverloadResponse() {
  static const std::string response = [] {
    const std::string body =
        DumpJson(ErrorBody("UNAVAILABLE", "the service has too many connections; retry"));
    return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
           "Content-Length: " +
           std::to_string(body.size()) + "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + body;
  }();
  return response;
}

std::string_view View(const beast::flat_buffer& buffer) {
  return {static_cast<const char*>(buffer.data().data()), buffer.size()};
}

}  // namespace

class Session;

class HttpServer::Impl {
 public:
  Impl(HttpServerOptions options, HttpHandler handler, HttpObserver observer)
      : options_(options),
        handler_(std::move(handler)),
        observer_(std::move(observer)),
        io_(options.io_threads),
        acceptor_(asio::make_strand(io_)),
        accept_pause_(acceptor_.get_executor()),
        pool_(static_cast<std::size_t>(options.worker_threads)) {}

  ~Impl() { pool_.join(); }

  int Listen(const std::string& host, int port);
  void Run();
  void Stop();

  void Observe(std::string_view method, int status) noexcept {
    if (!observer_) return;
    try {
      observer_(method, status);
    } catch (...) {
    }
  }

  // Registers a session once a shared pointer owns it: its weak pointer is copied here, under
  // the mutex Stop() reads it under (a session's own weak_from_this() is written by make_shared
  // after the constructor, unguarded).
  void Register(const std::shared_ptr<Session>& session) {
    std::lock_guard lock(sessions_mutex_);
    sessions_.emplace(session.get(), session);
  }
  void Unregister(Session* session) {
    std::lock_guard lock(sessions_mutex_);
    sessions_.erase(session);
  }

  HttpServerOptions options_;
  const HttpHandler handler_;
  const HttpObserver observer_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  asio::steady_timer accept_pause_;  // after an accept failed for want of descriptors
  asio::thread_pool pool_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> connections_{0};

 private:
  void Accept();

  std::mutex sessions_mutex_;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions_;
};

// One connection: reads a request, hands it to a worker, writes the answer, and again. Every
// member but the immutable ones is used on the connection's strand only.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(HttpServer::Impl& server, tcp::socket socket)
      : server_(server), executor_(socket.get_executor()), stream_(std::move(socket)) {
    server_.connections_.fetch_add(1);
  }

  ~Session() {
    server_.Unregister(this);
    server_.connections_.fetch_sub(1);
  }

  const asio::any_io_executor& executor() const { return executor_; }

  // Starts reading the first request.
  void Start() {
    asio::dispatch(executor_, [self = shared_from_this()] {
      if (self->server_.stopping_.load()) return self->Close();
      self->BeginIdle();
      self->ReadHead();
    });
  }

  // On the strand: ends the connection unless a request is being answered (its answer then
  // closes it).
  void StopIfIdle() {
    if (phase_ != Phase::kHandling && phase_ != Phase::kWriting) Close();
  }

 private:
  enum class Phase { kIdle, kRequestLine, kHead, kBody, kHandling, kWriting, kLingering, kClosed };

  const HttpServerOptions& options() const { return server_.options_; }

  void BeginIdle() {
    phase_ = Phase::kIdle;
    deadline_ = SteadyClock::now() + options().idle_timeout;
    scanned_ = 0;
    method_.clear();
  }

  // Reads until the buffer holds a whole request head, then checks and parses it.
  void ReadHead() {
    if (phase_ == Phase::kIdle) {
      // Empty lines before a request line are ignored (RFC 9112 2.2).
      while (View(buffer_).substr(0, 2) == "\r\n") buffer_.consume(2);
      if (buffer_.size() > 0) {
        phase_ = Phase::kRequestLine;
        first_byte_ = SteadyClock::now();
        deadline_ = first_byte_ + options().request_line_timeout;
      }
    }
    const std::string_view data = View(buffer_);
    if (phase_ == Phase::kRequestLine && data.find("\r\n") != std::string_view::npos) {
      phase_ = Phase::kHead;
      deadline_ = first_byte_ + options().header_timeout;
    }
    const std::size_t end = data.find("\r\n\r\n", scanned_ > 3 ? scanned_ - 3 : 0);
    if (end != std::string_view::npos && end + 4 <= options().max_header_bytes) {
      return ParseHead(end + 4);
    }
    if (end != std::string_view::npos || data.size() >= options().max_header_bytes ||
        (phase_ == Phase::kRequestLine &&
         data.size() > options().max_target_bytes + kRequestLineSlack)) {
      method_ = std::string(RequestMethod(data));
      if (phase_ == Phase::kRequestLine) {
        return Refuse(414, "URI_TOO_LONG",
                      "a request target has at most " + std::to_string(options().max_target_bytes) +
                          " bytes");
      }
      return Refuse(
          431, "HEADERS_TOO_LARGE",
          "a request head has at most " + std::to_string(options().max_header_bytes) + " bytes");
    }
    scanned_ = data.size();
    stream_.expires_at(deadline_);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec || self->phase_ == Phase::kClosed) return self->Close();
                              self->buffer_.commit(n);
                              self->ReadHead();
                            });
  }

  // Checks the head of `head_bytes` at the buffer's start, parses it, and reads the body.
  void ParseHead(std::size_t head_bytes) {
    const std::string_view head = View(buffer_).substr(0, head_bytes);
    method_ = std::string(RequestMethod(head));
    const HeadLimits limits{options().max_target_bytes, options().max_header_count};
    if (std::optional<HeadRefusal> refusal = CheckRequestHead(head, limits)) {
      return Refuse(refusal->status, refusal->code, refusal->message);
    }
    parser_.emplace();
    parser_->eager(false);
    parser_->header_limit(static_cast<std::uint32_t>(head_bytes + 1));
    parser_->body_limit(options().max_body_bytes);
    beast::error_code ec;
    const std::size_t used = parser_->put(asio::buffer(head.data(), head.size()), ec);
    if (ec == http::error::body_limit) return RefuseBodyTooLarge();
    if (ec || !parser_->is_header_done()) {
      return Refuse(400, "BAD_REQUEST", "the request head is malformed: " + ec.message());
    }
    buffer_.consume(used);
    scanned_ = 0;
    phase_ = Phase::kBody;
    deadline_ = SteadyClock::now() + options().body_timeout;
    if (!parser_->is_done() && buffer_.size() == 0 && ExpectsContinue()) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      stream_.expires_after(options().write_timeout);
      asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                        [self = shared_from_this()](beast::error_code error, std::size_t) {
                          if (error || self->phase_ == Phase::kClosed) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  bool ExpectsContinue() const {
    const auto& fields = parser_->get();
    const auto it = fields.find(http::field::expect);
    return it != fields.end() && beast::iequals(it->value(), "100-continue");
  }

  void ReadBody() {
    if (parser_->is_done()) return Handle();
    stream_.expires_at(deadline_);
    http::async_read(
        stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
          if (self->phase_ == Phase::kClosed) return self->Close();
          if (!ec) return self->Handle();
          if (ec == http::error::body_limit) return self->RefuseBodyTooLarge();
          if (ec.category() == http::make_error_code(http::error::need_more).category() &&
              ec != http::error::end_of_stream && ec != http::error::partial_message) {
            return self->Refuse(400, "BAD_REQUEST",
                                "the request body is malformed: " + ec.message());
          }
          self->Close();  // a deadline, a reset, or the client went away
        });
  }

  // Hands the request to a worker; its answer comes back to the strand to be written.
  void Handle() {
    phase_ = Phase::kHandling;
    http::request<http::string_body>& message = parser_->get();
    HttpRequest request;
    request.method = std::string(message.method_string());
    request.target = std::string(message.target());
    request.body = std::move(message.body());
    for (const auto& field : message) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    close_after_ = !message.keep_alive();
    const bool head_only = message.method() == http::verb::head;
    parser_.reset();
    asio::post(server_.pool_, [self = shared_from_this(), request = std::move(request), head_only,
                               work = asio::make_work_guard(server_.io_)]() mutable {
      HttpReply reply;
      try {
        reply = self->server_.handler_(request);
      } catch (const std::exception& e) {
        spdlog::error("{} {} failed: {}", request.method, request.target, e.what());
        reply = ErrorReply(500, "INTERNAL", std::string("internal error: ") + e.what());
      } catch (...) {
        reply = ErrorReply(500, "INTERNAL", "internal error");
      }
      asio::post(self->executor_, [self, reply = std::move(reply), head_only]() mutable {
        self->Write(std::move(reply), head_only);
      });
    });
  }

  // Writes `reply`; then reads the next request, or closes the connection when the request or
  // the server says so.
  void Write(HttpReply reply, bool head_only) {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kWriting;
    if (server_.stopping_.load()) close_after_ = true;
    response_ = {};
    response_.version(11);
    response_.result(static_cast<unsigned>(reply.status));
    for (auto& [name, value] : reply.headers) response_.insert(name, value);
    if (!reply.content_type.empty()) response_.set(http::field::content_type, reply.content_type);
    response_.body() = std::move(reply.body);
    response_.keep_alive(!close_after_);
    // A 204 carries no Content-Length (RFC 9110 8.6); every other answer does.
    if (reply.status != 204) response_.prepare_payload();
    if (head_only) {
      const std::size_t length = response_.body().size();
      response_.body().clear();
      response_.content_length(length);
    }
    server_.Observe(method_, reply.status);
    spdlog::debug("{} -> {}", method_, reply.status);
    stream_.expires_after(options().write_timeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec || self->phase_ == Phase::kClosed) return self->Close();
                        if (self->close_after_) return self->Linger();
                        self->response_ = {};
                        self->BeginIdle();
                        self->ReadHead();
                      });
  }

  void Refuse(int status, std::string_view code, std::string message) {
    parser_.reset();
    close_after_ = true;
    Write(ErrorReply(status, code, message), false);
  }

  void RefuseBodyTooLarge() {
    Refuse(413, "BODY_TOO_LARGE",
           "a request body has at most " + std::to_string(options().max_body_bytes) + " bytes");
  }

  // Ends the connection gracefully: no more writes, and what the client still sends is read
  // and dropped for a moment, so it reads the answer before the connection goes.
  void Linger() {
    phase_ = Phase::kLingering;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    deadline_ = SteadyClock::now() + kLingerTime;
    lingered_ = 0;
    Drain();
  }

  void Drain() {
    buffer_.consume(buffer_.size());
    stream_.expires_at(deadline_);
    stream_.async_read_some(buffer_.prepare(kReadChunk), [self = shared_from_this()](
                                                             beast::error_code ec, std::size_t n) {
      self->lingered_ += n;
      if (ec || self->lingered_ > kLingerBytes || self->phase_ == Phase::kClosed) {
        return self->Close();
      }
      self->buffer_.commit(n);
      self->Drain();
    });
  }

  void Close() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
    // The parser stays: a read still pending on it (a stop while a body arrives) completes with
    // operation_aborted and reads it; it goes with the session, which that read holds.
  }

  HttpServer::Impl& server_;
  const asio::any_io_executor executor_;  // the connection's strand
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  Phase phase_ = Phase::kIdle;
  SteadyClock::time_point first_byte_;
  SteadyClock::time_point deadline_;  // of the phase under way
  std::size_t scanned_ = 0;           // bytes of the buffer searched for the head's end
  std::string method_;                // of the request under way, for the observer
  bool close_after_ = false;
  std::size_t lingered_ = 0;
};

int HttpServer::Impl::Listen(const std::string& host, int port) {
  // Every connection holds a descriptor: make room for max_connections and some to spare.
  const rlim_t wanted = options_.max_connections + 256;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < wanted) {
    limit.rlim_cur = std::min(wanted, limit.rlim_max);
    setrlimit(RLIMIT_NOFILE, &limit);
    getrlimit(RLIMIT_NOFILE, &limit);
    if (limit.rlim_cur < wanted) {
      const std::size_t fit = limit.rlim_cur > 512 ? limit.rlim_cur - 256 : limit.rlim_cur / 2;
      spdlog::warn("the limit on open files ({}) leaves room for {} connections, not {}",
                   limit.rlim_cur, fit, options_.max_connections);
      options_.max_connections = fit;
    }
  }
  try {
    tcp::resolver resolver(io_);
    const auto results = resolver.resolve(host, std::to_string(port),
                                          tcp::resolver::passive | tcp::resolver::numeric_service);
    const tcp::endpoint endpoint = results.begin()->endpoint();
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));  // not SO_REUSEPORT
    acceptor_.bind(endpoint);
    acceptor_.listen(options_.backlog);
    return acceptor_.local_endpoint().port();
  } catch (const boost::system::system_error& e) {
    beast::error_code ignored;
    acceptor_.close(ignored);
    throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                             e.code().message());
  }
}

void HttpServer::Impl::Accept() {
  acceptor_.async_accept(asio::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
    if (!acceptor_.is_open() || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors or memory: wait a moment rather than spin on the pending connection.
      spdlog::warn("accepting a connection failed: {}", ec.message());
      accept_pause_.expires_after(std::chrono::milliseconds(50));
      accept_pause_.async_wait([this](beast::error_code error) {
        if (!error && acceptor_.is_open()) Accept();
      });
      return;
    }
    if (stopping_.load()) {
      beast::error_code ignored;
      socket.close(ignored);
    } else if (connections_.load() >= options_.max_connections) {
      const std::string& response = OverloadResponse();
      [[maybe_unused]] const ssize_t sent = ::send(socket.native_handle(), response.data(),
                                                   response.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      Observe("", 503);
      beast::error_code ignored;
      socket.shutdown(tcp::socket::shutdown_send, ignored);
      socket.close(ignored);
    } else {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      const auto session = std::make_shared<Session>(*this, std::move(socket));
      Register(session);
      session->Start();
    }
    Accept();
  });
}

void HttpServer::Impl::Run() {
  asio::dispatch(acceptor_.get_executor(), [this] {
    if (!stopping_.load() && acceptor_.is_open()) Accept();
  });
  auto serve = [this] {
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("the HTTP server's I/O thread caught: {}", e.what());
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < options_.io_threads; ++i) threads.emplace_back(serve);
  serve();
  for (std::thread& thread : threads) thread.join();
}

void HttpServer::Impl::Stop() {
  if (stopping_.exchange(true)) return;
  asio::post(acceptor_.get_executor(), [this] {
    beast::error_code ignored;
    acceptor_.close(ignored);
    accept_pause_.cancel();
  });
  std::lock_guard lock(sessions_mutex_);
  for (const auto& entry : sessions_) {
    if (std::shared_ptr<Session> alive = entry.second.lock()) {
      asio::post(alive->executor(), [alive] { alive->StopIfIdle(); });
    }
  }
}

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler, HttpObserver observer) {
  if (!handler) throw std::invalid_argument("an HTTP server needs a handler");
  if (options.io_threads < 1 || options.worker_threads < 1 || options.max_connections < 1 ||
      options.max_header_bytes < 1 || options.max_header_count < 1) {
    throw std::invalid_argument("an HTTP server needs positive thread counts and limits");
  }
  impl_ = std::make_shared<Impl>(options, std::move(handler), std::move(observer));
}

HttpServer::~HttpServer() { impl_->Stop(); }

int HttpServer::Listen(const std::string& host, int port) { return impl_->Listen(host, port); }

void HttpServer::Run() { impl_->Run(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace eshop
