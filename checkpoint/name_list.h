// NameList: the names of one directory's files in chunks that never move, so 100,000 files cost
// a few chunks and one array of offsets, not 100,000 strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace tv {

// Adding never copies what is already there (a directory of 100,000 checkpoints touches each byte
// of its names once). Each name is one length byte and its bytes; chunks double from 256 bytes to
// 64 KiB, so a directory of two files costs 256 bytes. Indexes are stable.
class NameList {
 public:
  static constexpr std::size_t kMaxName = 255;  // NAME_MAX: no directory entry is longer
  // false, and nothing added, for a name longer than kMaxName.
  bool add(std::string_view name);
  // Moves every name of `other` after these (its chunks move, no name is copied).
  void append(NameList&& other);
  void pop_back() { at_.pop_back(); }
  // Room for `names` offsets, so that a large directory's offset array is not copied as it grows
  // (a hint: more names are still added, fewer leave the rest untouched).
  void reserve(std::size_t names) { at_.reserve(names); }
  std::size_t size() const { return at_.size(); }
  bool empty() const { return at_.empty(); }
  std::string_view operator[](std::size_t i) const {
    const std::uint32_t at = at_[i];
    const char* p = chunks_[at >> kShift].get() + (at & (kLargest - 1));
    return {p + 1, static_cast<unsigned char>(*p)};
  }
  std::string_view back() const { return (*this)[size() - 1]; }
  bool contains(std::string_view name) const {
    for (std::size_t i = 0; i < size(); ++i)
      if ((*this)[i] == name) return true;
    return false;
  }

 private:
  static constexpr unsigned kShift = 16;
  static constexpr std::size_t kLargest = std::size_t{1} << kShift;
  static constexpr std::size_t kMostChunks = std::size_t{1} << (32 - kShift);
  std::vector<std::unique_ptr<char[]>> chunks_;
  std::size_t capacity_ = 0;       // of the last chunk
  std::size_t used_ = 0;           // of the last chunk
  std::vector<std::uint32_t> at_;  // chunk << kShift | offset of the length byte
};

}  // namespace tv
