// Damage for tests: a bit of a file flipped in place, as a failing disk would.
#pragma once

#include <cstddef>
#include <fstream>
#include <iterator>
#include <string>

namespace wow::testing_support {

// Flips one bit (0x04) of the middle byte of the first copy of `text` in the file at `path`;
// false, changing nothing, when the file holds none.
inline bool FlipABitOf(const std::string& path, const std::string& text) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::size_t at = bytes.find(text);
  if (at == std::string::npos) return false;
  const std::size_t middle = at + text.size() / 2;
  bytes[middle] = static_cast<char>(bytes[middle] ^ 0x04);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return true;
}

}  // namespace wow::testing_support
