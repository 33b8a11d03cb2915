// TempDir: a fresh directory under the system's temporary directory, removed with its contents
// when the TempDir is destroyed. For tests. Not thread-safe; move-only.
#pragma once

#include <filesystem>
#include <string>

namespace wow::testing_support {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // path() / name, as a string.
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace wow::testing_support
