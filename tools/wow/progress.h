// ProgressBar: one line on a terminal, redrawn in place ("\r"), at most ten times a second.
// Disabled (every call does nothing) when standard output is not a terminal.
//
// Not thread-safe: use it from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace wow::tool {

class ProgressBar {
 public:
  // `total` is the amount that makes 100% (bytes of the input); 0 when unknown.
  ProgressBar(bool enabled, std::uintmax_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  bool enabled() const { return enabled_; }

  // Redraws the bar at `done` of total with `status` after it, unless it was drawn less than
  // 100 ms ago and `force` is false.
  void Update(std::uintmax_t done, const std::string& status, bool force = false);
  // Erases the bar, so other output can be written; the next Update draws it again.
  void Clear();

 private:
  bool enabled_;
  std::uintmax_t total_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace wow::tool
