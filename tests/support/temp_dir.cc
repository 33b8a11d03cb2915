#include "support/temp_dir.h"

#include <stdexcept>

#include "wow/model.h"

namespace wow::testing_support {

TempDir::TempDir() : path_(std::filesystem::temp_directory_path() / ("wow-test-" + NewId())) {
  if (!std::filesystem::create_directories(path_)) {
    throw std::runtime_error("cannot create temporary directory " + path_.string());
  }
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace wow::testing_support
