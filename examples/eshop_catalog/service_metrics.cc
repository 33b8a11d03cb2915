#include "service_metrics.h"

#include <fmt/format.h>

#include <algorithm>

#include "wow/incidents.h"
#include "wow/projection.h"
#include "wow/store_wrappers.h"

namespace eshop {
namespace {

using Clock = std::chrono::steady_clock;

// Upper bounds in seconds: 100 µs to 10 s.
const std::vector<double>& DefaultBounds() {
  static const std::vector<double> bounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                             0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                             1,      2.5,     5,      10};
  return bounds;
}

std::string Label(std::string_view name, std::string_view value) {
  return std::string(name) + "=\"" + PrometheusLabelValue(value) + "\"";
}

class MeteredEventLog final : public wow::EventLogWrapper {
 public:
  MeteredEventLog(std::shared_ptr<wow::EventLog> log, std::shared_ptr<ServiceMetrics> metrics)
      : EventLogWrapper(std::move(log)), metrics_(std::move(metrics)) {}

  wow::AppendResult Append(const wow::Stream& stream) override {
    const auto start = Clock::now();
    try {
      wow::AppendResult result = target().Append(stream);
      metrics_->ObserveAppend(Clock::now() - start);
      metrics_->CountAppend(wow::KindName(result.kind()));
      return result;
    } catch (...) {
      metrics_->ObserveAppend(Clock::now() - start);
      metrics_->CountAppend("error");
      throw;
    }
  }

  std::vector<wow::AppendResult> AppendAll(const std::vector<wow::Stream>& streams) override {
    const auto start = Clock::now();
    try {
      std::vector<wow::AppendResult> results = target().AppendAll(streams);
      metrics_->ObserveAppend(Clock::now() - start);
      for (const wow::AppendResult& result : results) {
        metrics_->CountAppend(wow::KindName(result.kind()));
      }
      return results;
    } catch (...) {
      metrics_->ObserveAppend(Clock::now() - start);
      metrics_->CountAppend("error");
      throw;
    }
  }

 private:
  std::shared_ptr<ServiceMetrics> metrics_;
};

class MeteredReservations final : public wow::ReservationStoreWrapper {
 public:
  MeteredReservations(std::shared_ptr<wow::ReservationStore> reservations,
                      std::shared_ptr<ServiceMetrics> metrics)
      : ReservationStoreWrapper(std::move(reservations)), metrics_(std::move(metrics)) {}

  bool Reserve(const wow::ReservationScope& scope, const std::string& key,
               const wow::AggregateRef& owner, const std::string& hold,
               std::chrono::milliseconds ttl) override {
    try {
      const bool held = target().Reserve(scope, key, owner, hold, ttl);
      metrics_->CountReserve(held ? "held" : "taken");
      return held;
    } catch (...) {
      metrics_->CountReserve("error");
      throw;
    }
  }

 private:
  std::shared_ptr<ServiceMetrics> metrics_;
};

void Header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

}  // namespace

std::string PrometheusLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

LatencyHistogram::LatencyHistogram()
    : bounds_(DefaultBounds()),
      buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(DefaultBounds().size() + 1)) {
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0);
}

void LatencyHistogram::Observe(std::chrono::nanoseconds duration) {
  const std::int64_t nanos = std::max<std::int64_t>(duration.count(), 0);
  const double seconds = static_cast<double>(nanos) / 1e9;
  const size_t bucket = static_cast<size_t>(
      std::lower_bound(bounds_.begin(), bounds_.end(), seconds) - bounds_.begin());
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<std::uint64_t>(nanos), std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void LatencyHistogram::Render(std::string& out, std::string_view name) const {
  std::uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds_[i], cumulative);
  }
  cumulative += buckets_[bounds_.size()].load(std::memory_order_relaxed);
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n", name, cumulative);
  out += fmt::format("{}_sum {}\n", name,
                     static_cast<double>(sum_nanos_.load(std::memory_order_relaxed)) / 1e9);
  out += fmt::format("{}_count {}\n", name, count_.load(std::memory_order_relaxed));
}

void LabeledCounter::Increment(const std::string& labels) {
  std::lock_guard lock(mutex_);
  ++counts_[labels];
}

void LabeledCounter::Render(std::string& out, std::string_view name) const {
  std::lock_guard lock(mutex_);
  for (const auto& [labels, count] : counts_) {
    out += fmt::format("{}{{{}}} {}\n", name, labels, count);
  }
}

std::uint64_t LabeledCounter::Get(const std::string& labels) const {
  std::lock_guard lock(mutex_);
  auto it = counts_.find(labels);
  return it == counts_.end() ? 0 : it->second;
}

void ServiceMetrics::CountCommand(std::string_view aggregate, std::string_view command,
                                  std::string_view outcome) {
  commands_.Increment(Label("aggregate", aggregate) + "," + Label("command", command) + "," +
                      Label("outcome", outcome));
}

void ServiceMetrics::CountRejection(std::string_view aggregate, std::string_view code) {
  rejections_.Increment(Label("aggregate", aggregate) + "," + Label("code", code));
}

void ServiceMetrics::CountAppend(std::string_view result) {
  appends_.Increment(Label("result", result));
}

void ServiceMetrics::CountReserve(std::string_view result) {
  reserves_.Increment(Label("result", result));
}

void ServiceMetrics::CountHttp(std::string_view method, int status) {
  static constexpr std::string_view kMethods[] = {"GET",    "HEAD",  "POST",   "PUT",
                                                  "DELETE", "PATCH", "OPTIONS"};
  std::string_view label = "other";
  for (std::string_view known : kMethods) {
    if (method == known) label = known;
  }
  if (status < 100 || status > 599) status = 0;
  http_.Increment(Label("method", label) + "," + Label("status", std::to_string(status)));
}

std::string ServiceMetrics::Render() const {
  std::string out;
  Header(out, "wow_catalog_commands_total", "counter", "Commands processed, by outcome.");
  commands_.Render(out, "wow_catalog_commands_total");
  Header(out, "wow_catalog_rejections_total", "counter", "Rejected commands, by code.");
  rejections_.Render(out, "wow_catalog_rejections_total");
  Header(out, "wow_catalog_command_seconds", "histogram",
         "Time of a command through the processor (load, decide, reserve, append, confirm).");
  command_seconds_.Render(out, "wow_catalog_command_seconds");
  Header(out, "wow_catalog_appends_total", "counter",
         "Log appends, by result; each conflict makes the processor decide again.");
  appends_.Render(out, "wow_catalog_appends_total");
  Header(out, "wow_catalog_append_seconds", "histogram",
         "Time of one append to the log, group commit included.");
  append_seconds_.Render(out, "wow_catalog_append_seconds");
  Header(out, "wow_catalog_reserves_total", "counter", "Key reservations, by result.");
  reserves_.Render(out, "wow_catalog_reserves_total");
  Header(out, "wow_catalog_http_requests_total", "counter", "HTTP requests, by method and status.");
  http_.Render(out, "wow_catalog_http_requests_total");
  Header(out, "wow_key_incidents_total", "counter",
         "Confirmations that found another aggregate holding the key (see /healthz); 0 unless a "
         "uniqueness promise broke.");
  out += fmt::format("wow_key_incidents_total {}\n", wow::KeyIncidentCount());
  Header(out, "wow_data_loss_total", "counter",
         "Reads that found the store's data damaged (a stream failing its checksum; see /healthz); "
         "0 unless the file is damaged.");
  out += fmt::format("wow_data_loss_total {}\n", wow::DataLossCount());
  if (lag_log_) {
    Header(out, "wow_projection_lag_entries", "gauge",
           "Entries of each partition of the log past the projection's checkpoint.");
    const std::vector<wow::Sequence> lag = wow::SubscriptionLag(*lag_log_, lag_subscription_);
    for (size_t p = 0; p < lag.size(); ++p) {
      out += fmt::format("wow_projection_lag_entries{{{},{}}} {}\n",
                         Label("subscription", lag_subscription_),
                         Label("partition", std::to_string(p)), lag[p]);
    }
  }
  if (store_metrics_) {
    for (const wow::StoreMetric& metric : store_metrics_()) {
      Header(out, metric.name, metric.counter ? "counter" : "gauge", metric.help);
      out += fmt::format("{} {}\n", metric.name, metric.value);
    }
  }
  return out;
}

std::shared_ptr<wow::EventLog> MeterEventLog(std::shared_ptr<wow::EventLog> log,
                                             std::shared_ptr<ServiceMetrics> metrics) {
  return std::make_shared<MeteredEventLog>(std::move(log), std::move(metrics));
}

std::shared_ptr<wow::ReservationStore> MeterReservations(
    std::shared_ptr<wow::ReservationStore> reservations, std::shared_ptr<ServiceMetrics> metrics) {
  return std::make_shared<MeteredReservations>(std::move(reservations), std::move(metrics));
}

}  // namespace eshop
