// A small aggregate for the consumer programs: a brand whose name is unique per tenant.
#pragma once

#include <wow/aggregate.h>
#include <wow/event_log.h>

#include <memory>
#include <string>
#include <string_view>

namespace consumer {

struct CreateBrand {
  static constexpr std::string_view kType = "consumer.CreateBrand";
  std::string name;
};
struct BrandCreated {
  static constexpr std::string_view kType = "consumer.BrandCreated";
  std::string name;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CreateBrand, name)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(BrandCreated, name)

struct Brand {
  std::string name;
};

inline constexpr std::string_view kContext = "consumer";
inline constexpr std::string_view kBrandNames = "consumer.brand-name";

std::shared_ptr<wow::AggregateType<Brand>> BrandType();

// Runs the same checks on any log and reservation store; returns the number of failures, each
// printed to stderr.
int CheckBrands(std::shared_ptr<wow::EventLog> log, std::shared_ptr<wow::ReservationStore> keys,
                std::shared_ptr<const wow::Clock> clock);

}  // namespace consumer
