#include "wow/model.h"

#include <xxhash.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <random>

#include "wow/error.h"

namespace wow {

std::string ToString(const AggregateRef& ref) {
  return ref.context + "/" + ref.aggregate + "/" + ref.tenant_id + "/" + ref.id;
}

std::ostream& operator<<(std::ostream& out, const AggregateRef& ref) {
  return out << ToString(ref);
}

void ValidateTypeName(std::string_view name, std::string_view what) {
  bool ok = !name.empty() && name.size() <= 64 && name.front() >= 'a' && name.front() <= 'z';
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  }
  Require(ok, [&] {
    return std::string(what) + " \"" + std::string(name) +
           "\" is not a valid name: use 1 to 64 characters of a-z, 0-9 and '-', "
           "starting with a letter";
  });
}

void ValidateRef(const AggregateRef& ref) {
  ValidateTypeName(ref.context, "context");
  ValidateTypeName(ref.aggregate, "aggregate type");
  Require(ref.tenant_id.size() <= 256,
          [&] { return "tenant id of " + ToString(ref) + " is over 256 bytes"; });
  Require(!ref.id.empty(), [&] { return "aggregate id of " + ToString(ref) + " is empty"; });
  Require(ref.id.size() <= 256,
          [&] { return "aggregate id of " + ToString(ref) + " is over 256 bytes"; });
}

void ValidateVersion(Version version, std::string_view what) {
  Require(version >= kUnversioned, [&] {
    return std::string(what) + " " + std::to_string(version) + " is below UNVERSIONED (" +
           std::to_string(kUnversioned) + ")";
  });
}

void ValidatePartitionCount(int partitions) {
  Require(partitions >= 1 && partitions <= kMaxPartitions, [&] {
    return "partition count must be 1 to " + std::to_string(kMaxPartitions) + ", got " +
           std::to_string(partitions);
  });
}

void ValidatePartition(int partition, int partitions) {
  Require(partition >= 0 && partition < partitions, [&] {
    return "partition " + std::to_string(partition) + " is out of range [0, " +
           std::to_string(partitions) + ")";
  });
}

int PartitionOf(std::string_view tenant_id, std::string_view id, int partitions) {
  std::string input;
  input.reserve(tenant_id.size() + 1 + id.size());
  input.append(tenant_id).push_back('\0');
  input.append(id);
  const XXH64_hash_t hash = XXH64(input.data(), input.size(), /*seed=*/0);
  return static_cast<int>(hash % static_cast<XXH64_hash_t>(partitions));
}

EpochMillis SystemClock::NowMillis() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const std::shared_ptr<SystemClock>& SystemClock::Instance() {
  static const auto* clock = new std::shared_ptr<SystemClock>(std::make_shared<SystemClock>());
  return *clock;
}

std::string NewId() {
  thread_local std::mt19937_64 generator([] {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 32) ^ device();
  }());
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const std::uint64_t random_high = generator() & 0xffff;  // 16 bits
  const std::uint64_t random_low = generator();            // 64 bits
  std::array<char, 33> text{};
  std::snprintf(text.data(), text.size(), "%012llx%04llx%016llx",
                static_cast<unsigned long long>(millis) & 0xffffffffffffULL,
                static_cast<unsigned long long>(random_high),
                static_cast<unsigned long long>(random_low));
  return std::string(text.data(), 32);
}

bool IsUnreservedId(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '~' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace wow
