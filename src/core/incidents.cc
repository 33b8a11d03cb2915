#include "wow/incidents.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>

namespace wow {
namespace {

std::atomic<std::uint64_t> incident_count{0};
std::mutex last_mutex;
std::optional<KeyIncident> last_incident;  // guarded by last_mutex
std::atomic<std::uint64_t> data_loss_count{0};
std::optional<std::string> last_data_loss;  // guarded by last_mutex

}  // namespace

std::string Describe(const KeyIncident& incident) {
  const ReservationScope& s = incident.scope;
  return "key \"" + incident.key + "\" of namespace \"" + s.ns + "\" (" + s.context + "/" +
         s.aggregate + ", tenant \"" + s.tenant_id + "\") was confirmed by " +
         ToString(incident.claimant) + " at version " + std::to_string(incident.version) +
         " but is held by " + (incident.holder ? ToString(*incident.holder) : "another aggregate");
}

void ReportKeyIncident(const KeyIncident& incident) {
  spdlog::error("key incident: {}; two aggregates may hold one key: look into both",
                Describe(incident));
  {
    std::lock_guard lock(last_mutex);
    last_incident = incident;
  }
  incident_count.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t KeyIncidentCount() { return incident_count.load(std::memory_order_relaxed); }

std::optional<KeyIncident> LastKeyIncident() {
  std::lock_guard lock(last_mutex);
  return last_incident;
}

void ReportDataLoss(const std::string& description) {
  {
    std::lock_guard lock(last_mutex);
    last_data_loss = description;
  }
  data_loss_count.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t DataLossCount() { return data_loss_count.load(std::memory_order_relaxed); }

std::optional<std::string> LastDataLoss() {
  std::lock_guard lock(last_mutex);
  return last_data_loss;
}

}  // namespace wow
