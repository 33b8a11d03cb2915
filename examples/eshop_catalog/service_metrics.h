// ServiceMetrics: the catalog service's counters and latency histograms, rendered in the
// Prometheus text exposition format (version 0.0.4) for GET /metrics.
//
// What it counts (every name starts with wow_catalog_):
//   commands_total{aggregate,command,outcome}  commands by outcome: accepted, rejected, noop,
//                                              duplicate, unknown, error
//   rejections_total{aggregate,code}           rejected commands by the domain's code
//   command_seconds                            histogram: a command through the processor
//   appends_total{result}                      log appends by result: appended, conflict (each one
//                                              makes the processor decide again), duplicate,
//                                              refused, unknown, error
//   append_seconds                             histogram: one append to the log (group commit
//                                              included)
//   reserves_total{result}                     key reservations: held, taken, error
//   http_requests_total{method,status}         HTTP requests answered; method is one of GET, HEAD,
//                                              POST, PUT, DELETE, PATCH, OPTIONS or other, so no
//                                              client can add series
// and wow_projection_lag_entries{subscription,partition}, a gauge: the entries of each partition
// past a watched projection's checkpoint (wow::SubscriptionLag).
//
// MeterEventLog and MeterReservations wrap the stores the processor uses, so appends and reserves
// are measured where they happen.
//
// Thread-safety: safe for concurrent use.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "wow/event_log.h"
#include "wow/reservation_store.h"
#include "wow/store_set.h"

namespace eshop {

// A histogram of durations with fixed upper bounds (seconds); lock-free.
class LatencyHistogram {
 public:
  LatencyHistogram();
  void Observe(std::chrono::nanoseconds duration);
  // Appends the _bucket, _sum and _count lines of `name`.
  void Render(std::string& out, std::string_view name) const;
  std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;                             // seconds, increasing; +Inf is implied
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // bounds_.size() + 1, not cumulative
  std::atomic<std::uint64_t> sum_nanos_{0};
  std::atomic<std::uint64_t> count_{0};
};

// Counters by label set; each label set is rendered as one line.
class LabeledCounter {
 public:
  // Adds 1 to the counter of `labels`, a rendered label set such as `method="GET",status="200"`.
  void Increment(const std::string& labels);
  void Render(std::string& out, std::string_view name) const;
  // The counter of `labels`; 0 when never incremented.
  std::uint64_t Get(const std::string& labels) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::uint64_t> counts_;
};

class ServiceMetrics {
 public:
  void CountCommand(std::string_view aggregate, std::string_view command, std::string_view outcome);
  void CountRejection(std::string_view aggregate, std::string_view code);
  void ObserveCommand(std::chrono::nanoseconds duration) { command_seconds_.Observe(duration); }
  void CountAppend(std::string_view result);
  void ObserveAppend(std::chrono::nanoseconds duration) { append_seconds_.Observe(duration); }
  void CountReserve(std::string_view result);
  // Counts an answer of `status` to a request of `method`; a method outside the fixed set counts
  // as "other", a status outside 100-599 as "0".
  void CountHttp(std::string_view method, int status);

  // Adds the store set's own figures (the SQLite writer's wow_sqlite_*, say) to every Render.
  // Call before serving.
  void WatchStores(const wow::StoreSet& stores) {
    store_metrics_ = [stores] { return stores.Metrics(); };
  }

  // Adds the lag of `subscription` in `log` to every Render. Call before serving.
  void WatchLag(std::shared_ptr<wow::EventLog> log, std::string subscription) {
    lag_log_ = std::move(log);
    lag_subscription_ = std::move(subscription);
  }

  // Every metric in the Prometheus text format.
  std::string Render() const;

 private:
  LabeledCounter commands_;
  LabeledCounter rejections_;
  LabeledCounter appends_;
  LabeledCounter reserves_;
  LabeledCounter http_;
  LatencyHistogram command_seconds_;
  LatencyHistogram append_seconds_;
  std::function<std::vector<wow::StoreMetric>()> store_metrics_;
  std::shared_ptr<wow::EventLog> lag_log_;
  std::string lag_subscription_;
};

// `log`, counting and timing every Append and AppendAll in `metrics`.
std::shared_ptr<wow::EventLog> MeterEventLog(std::shared_ptr<wow::EventLog> log,
                                             std::shared_ptr<ServiceMetrics> metrics);

// `reservations`, counting every Reserve in `metrics`.
std::shared_ptr<wow::ReservationStore> MeterReservations(
    std::shared_ptr<wow::ReservationStore> reservations, std::shared_ptr<ServiceMetrics> metrics);

// `value` escaped for a Prometheus label value (backslash, quote, newline).
std::string PrometheusLabelValue(std::string_view value);

}  // namespace eshop
