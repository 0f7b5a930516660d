// The unsigned little-endian integer in `bytes` bytes (at most 8) of `s` at `at`: the integers of
// zip records, safetensors' header length and pickle's opcode arguments. The caller has checked
// that the bytes are there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tv {

inline std::uint64_t little_endian(std::string_view s, std::size_t at, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = bytes; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

}  // namespace tv
