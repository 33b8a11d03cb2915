#include "progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace wow::tool {

namespace {

constexpr int kBarWidth = 30;

int TerminalColumns() {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

ProgressBar::ProgressBar(bool enabled, std::uintmax_t total)
    : enabled_(enabled && isatty(STDOUT_FILENO) == 1), total_(total) {}

ProgressBar::~ProgressBar() { Clear(); }

void ProgressBar::Update(std::uintmax_t done, const std::string& status, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  std::string line = "[";
  if (total_ > 0) {
    const std::uintmax_t shown = std::min(done, total_);
    const int filled = static_cast<int>(shown * kBarWidth / total_);
    line += std::string(filled, '#') + std::string(kBarWidth - filled, '-') + "] ";
    const std::string percent = std::to_string(shown * 100 / total_) + "%";
    line += std::string(4 - std::min<std::size_t>(4, percent.size()), ' ') + percent;
  } else {
    line += std::string(kBarWidth, '?') + "]";
  }
  line += "  " + status;
  const std::size_t columns = static_cast<std::size_t>(TerminalColumns()) - 1;
  if (line.size() > columns) line.resize(columns);
  std::fputs(("\r\x1b[2K" + line).c_str(), stdout);
  std::fflush(stdout);
  drawn_ = true;
}

void ProgressBar::Clear() {
  if (!enabled_ || !drawn_) return;
  std::fputs("\r\x1b[2K", stdout);
  std::fflush(stdout);
  drawn_ = false;
}

}  // namespace wow::tool
