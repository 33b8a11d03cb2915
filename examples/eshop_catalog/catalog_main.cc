// wow-catalog: the eShop catalog over HTTP/JSON, on the store its --store URI names (the embedded
// SQLite file by default; docs/SERVICE.md).
//
// Opens the store set, runs a wow::Node with the brand and category types (its processor, its
// subscriptions and its timer service), and an HTTP server. SIGTERM and SIGINT stop it cleanly:
// the HTTP server first (the commands in flight finish), then the node and the stores. A second
// signal exits at once.
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include "catalog.h"
#include "catalog_http.h"
#include "http_server.h"
#include "service_metrics.h"
#include "wow/command_processor.h"
#include "wow/error.h"
#include "wow/node.h"
#include "wow/store_set.h"

namespace {

struct Flags {
  std::string store;
  std::string listen = "127.0.0.1:8080";
  int partitions = 16;
  bool partitions_given = false;
  std::string log_level = "info";
  int threads = 64;
  // The HTTP server's limits (HttpServerOptions), in flag units.
  int io_threads = 1;
  int max_connections = 10'000;
  int max_header_bytes = 16 * 1024;
  int max_header_count = 100;
  int max_body_bytes = 64 * 1024;
  int request_line_timeout_ms = 5'000;
  int header_timeout_ms = 10'000;
  int body_timeout_ms = 10'000;
  int idle_timeout_ms = 5'000;
  int write_timeout_ms = 10'000;
  std::string synchronous = "full";
  int busy_timeout_ms = 5000;
  int projection_wait_ms = 5'000;
  std::int64_t draft_time_ms = 7LL * 24 * 3600 * 1000;
};

struct Endpoint {
  std::string host;
  int port = 0;
};

// "HOST:PORT" or "[IPV6]:PORT"; nullopt when malformed.
std::optional<Endpoint> ParseListen(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  Endpoint endpoint;
  endpoint.host = text.substr(0, colon);
  if (endpoint.host.front() == '[') {
    if (endpoint.host.size() < 3 || endpoint.host.back() != ']') return std::nullopt;
    endpoint.host = endpoint.host.substr(1, endpoint.host.size() - 2);
  }
  const char* begin = text.data() + colon + 1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, endpoint.port);
  if (ec != std::errc() || ptr != end || endpoint.port < 0 || endpoint.port > 65535) {
    return std::nullopt;
  }
  return endpoint;
}

wow::SqliteOptions::Synchronous ParseSynchronous(const std::string& name) {
  if (name == "off") return wow::SqliteOptions::Synchronous::kOff;
  if (name == "normal") return wow::SqliteOptions::Synchronous::kNormal;
  return wow::SqliteOptions::Synchronous::kFull;
}

// Waits for SIGINT or SIGTERM (blocked in every thread) and stops `server`; a second signal
// exits at once. Returns when `done` is set.
void WatchSignals(eshop::HttpServer& server, const std::atomic<bool>& done) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  const timespec tick{0, 100'000'000};
  bool stopping = false;
  while (!done.load()) {
    const int signal = sigtimedwait(&signals, nullptr, &tick);
    if (signal > 0 && stopping) {
      spdlog::warn("second signal {}: exiting without a clean stop", signal);
      std::_Exit(1);
    }
    if (signal > 0) {
      spdlog::info("signal {}: finishing the requests in flight, then stopping", signal);
      stopping = true;
    }
    if (stopping) server.Stop();  // idempotent
  }
}

int Run(const Flags& flags) {
  const std::optional<Endpoint> endpoint = ParseListen(flags.listen);
  if (!endpoint) {
    spdlog::critical("--listen {}: expected HOST:PORT, such as 127.0.0.1:8080 or [::1]:0",
                     flags.listen);
    return 2;
  }
  wow::StoreUri uri;
  try {
    uri = wow::ParseStoreUri(flags.store);
  } catch (const wow::Error& e) {
    spdlog::critical("--store: {}", e.what());
    return 2;
  }
  if (uri.kind == wow::StoreUri::Kind::kSqlite) {
    const std::filesystem::path db_path(uri.location);
    if (db_path.has_parent_path()) {
      std::error_code ec;
      std::filesystem::create_directories(db_path.parent_path(), ec);
      if (ec) {
        spdlog::critical("cannot create the directory of the store {}: {}", uri.location,
                         ec.message());
        return 1;
      }
    }
  }

  const auto metrics = std::make_shared<eshop::ServiceMetrics>();
  wow::StoreSetOptions store_options;
  store_options.partitions = flags.partitions_given ? flags.partitions : 0;
  store_options.new_log_partitions = flags.partitions;
  store_options.sqlite.synchronous = ParseSynchronous(flags.synchronous);
  store_options.sqlite.busy_timeout = std::chrono::milliseconds(flags.busy_timeout_ms);
  const wow::StoreSet stores =
      wow::OpenStores(flags.store, std::string(eshop::kContext), store_options);
  metrics->WatchStores(stores);
  const int partitions = stores.partitions();

  // The node: the processor over metered stores, the timer subscription (and the reservation
  // subscription where the appends do not confirm their keys), and the timer service, which fires
  // the timers aggregates set (the catalog's own set none).
  wow::NodeOptions node_options;
  node_options.processor.workers = 1;
  auto node = std::make_unique<wow::Node>(
      stores.With(eshop::MeterEventLog(stores.log(), metrics),
                  eshop::MeterReservations(stores.reservations(), metrics)),
      node_options);
  node->Register(eshop::BrandType());
  node->Register(eshop::CategoryType());
  node->AddSubscription(
      wow::NewProjectionSubscription(eshop::CatalogProjection(), stores.read_models()));
  metrics->WatchLag(stores.log(), eshop::CatalogProjection()->subscription());
  node->Start();
  wow::CommandProcessor& processor = node->processor();

  eshop::CatalogHttp http(processor, stores.read_models(), metrics,
                          {.max_body_bytes = static_cast<std::size_t>(flags.max_body_bytes),
                           .projection_wait = std::chrono::milliseconds(flags.projection_wait_ms),
                           .draft_time = std::chrono::milliseconds(flags.draft_time_ms)});
  eshop::HttpServer server(
      {.io_threads = flags.io_threads,
       .worker_threads = flags.threads,
       .max_connections = static_cast<std::size_t>(flags.max_connections),
       .max_header_bytes = static_cast<std::size_t>(flags.max_header_bytes),
       .max_header_count = static_cast<std::size_t>(flags.max_header_count),
       .max_body_bytes = static_cast<std::size_t>(flags.max_body_bytes),
       .request_line_timeout = std::chrono::milliseconds(flags.request_line_timeout_ms),
       .header_timeout = std::chrono::milliseconds(flags.header_timeout_ms),
       .body_timeout = std::chrono::milliseconds(flags.body_timeout_ms),
       .idle_timeout = std::chrono::milliseconds(flags.idle_timeout_ms),
       .write_timeout = std::chrono::milliseconds(flags.write_timeout_ms)},
      [&http](const eshop::HttpRequest& request) { return http.Serve(request); },
      [&metrics](std::string_view method, int status) { metrics->CountHttp(method, status); });
  int port = 0;
  try {
    port = server.Listen(endpoint->host, endpoint->port);
  } catch (const std::exception& e) {
    spdlog::critical("{} (the address is in use or not available)", e.what());
    return 1;
  }
  const std::string host =
      endpoint->host.find(':') == std::string::npos ? endpoint->host : "[" + endpoint->host + "]";
  spdlog::info("{} partitions, synchronous={}, {} HTTP workers, {} I/O threads, node {}",
               partitions, flags.synchronous, flags.threads, flags.io_threads, node->name());
  std::cout << "wow-catalog listening on http://" << host << ":" << port << " (store "
            << flags.store << ")" << std::endl;

  std::atomic<bool> done{false};
  std::thread watcher([&] { WatchSignals(server, done); });
  server.Run();
  done = true;
  watcher.join();

  spdlog::info("HTTP server stopped; stopping the subscriptions and closing the store");
  node->Stop();
  node.reset();  // the processor's queued commands finish; the stores close after their users
  spdlog::info("stopped cleanly");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{
      "wow-catalog: the eShop catalog (brands and categories with unique names) over HTTP/JSON "
      "on the embedded SQLite store. Routes: see docs/SERVICE.md. SIGTERM or SIGINT stops it "
      "cleanly."};
  CLI::Option* store =
      app.add_option("--store", flags.store,
                     "The store: sqlite:PATH (or a bare PATH) for a SQLite database file, created "
                     "when missing with its directory, which several services may share; memory: "
                     "for a throw-away store (docs/SERVICE.md)");
  app.add_option("--db", flags.store, "The same as --store sqlite:PATH (kept for scripts)")
      ->excludes(store);
  app.add_option("--listen", flags.listen,
                 "HOST:PORT to listen on; port 0 picks a free port (the start line says which)")
      ->capture_default_str();
  CLI::Option* partitions =
      app.add_option("--partitions", flags.partitions,
                     "Partitions of the log of a new file (fixed forever; an existing file keeps "
                     "its own, and naming another count is an error)")
          ->capture_default_str()
          ->check(CLI::Range(1, 4096));
  app.add_option("--log-level", flags.log_level, "Log level (logs go to stderr)")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--threads", flags.threads,
                 "Threads that run requests (a command blocks one while it waits for the store); "
                 "connections do not hold them")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  app.add_option("--io-threads", flags.io_threads, "Threads that read and write the connections")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--max-connections", flags.max_connections,
                 "Open connections at most; a connection beyond gets 503 and is closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  app.add_option("--max-header-bytes", flags.max_header_bytes,
                 "Bytes of a request's head (request line and header fields) at most; more is 431")
      ->capture_default_str()
      ->check(CLI::Range(1024, 1 << 20));
  app.add_option("--max-header-count", flags.max_header_count,
                 "Header fields of a request at most; more is 431")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000));
  app.add_option("--max-body-bytes", flags.max_body_bytes,
                 "Bytes of a request's body at most; more is 413, answered before the body is read")
      ->capture_default_str()
      ->check(CLI::Range(1, 64 << 20));
  app.add_option("--request-line-timeout-ms", flags.request_line_timeout_ms,
                 "Time from a request's first byte to the end of its request line; then the "
                 "connection is closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 3'600'000));
  app.add_option("--header-timeout-ms", flags.header_timeout_ms,
                 "Time from a request's first byte to the end of its head; then the connection is "
                 "closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 3'600'000));
  app.add_option("--body-timeout-ms", flags.body_timeout_ms,
                 "Time from the end of a request's head to the end of its body; then the "
                 "connection is closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 3'600'000));
  app.add_option("--idle-timeout-ms", flags.idle_timeout_ms,
                 "Time a connection may wait for a request's first byte (a new one, or kept "
                 "alive after an answer); then it is closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 3'600'000));
  app.add_option("--projection-wait-ms", flags.projection_wait_ms,
                 "How long a command with ?wait=projected waits for the lists to show it; then "
                 "it is answered 202 with its position")
      ->capture_default_str()
      ->check(CLI::Range(0, 600'000));
  app.add_option("--draft-time-ms", flags.draft_time_ms,
                 "How long a draft ({\"draft\": true}) has to be published in; then its timer "
                 "expires it and frees its name (default 7 days)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{365} * 24 * 3600 * 1000));
  app.add_option("--write-timeout-ms", flags.write_timeout_ms,
                 "Time to write one response to a client that does not read it; then the "
                 "connection is closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 3'600'000));
  app.add_option("--synchronous", flags.synchronous,
                 "How hard a commit waits for the disk: full (nothing acknowledged is lost, even "
                 "on power loss), normal (survives a crash of the process), off (tests only)")
      ->capture_default_str()
      ->check(CLI::IsMember({"full", "normal", "off"}));
  app.add_option("--busy-timeout-ms", flags.busy_timeout_ms,
                 "How long a write waits for another process's lock on the file before it fails "
                 "with 503")
      ->capture_default_str()
      ->check(CLI::Range(0, 600'000));
  app.set_version_flag("--version", "wow-catalog 0.1.0");
  CLI11_PARSE(app, argc, argv);
  if (flags.store.empty()) {
    std::cerr << "wow-catalog: --store URI is required (or --db PATH); see --help\n";
    return 2;
  }
  flags.partitions_given = partitions->count() > 0;

  auto logger = spdlog::stderr_color_mt("wow-catalog");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(flags.log_level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  // Signals go to the watcher thread only; every thread started from here inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    return Run(flags);
  } catch (const wow::Error& e) {
    spdlog::critical("{}", e.what());  // "CODE: what failed and what to do"
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
  }
  return 1;
}
