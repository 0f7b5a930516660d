#include "checkpoint/name_list.h"

#include <algorithm>
#include <cstring>

namespace tv {

bool NameList::add(std::string_view name) {
  if (name.size() > kMaxName) return false;
  if (chunks_.empty() || used_ + 1 + name.size() > capacity_) {
    if (chunks_.size() >= kMostChunks) return false;
    capacity_ = chunks_.empty() ? kMaxName + 1 : std::min(capacity_ * 2, kLargest);
    chunks_.push_back(std::make_unique_for_overwrite<char[]>(capacity_));
    used_ = 0;
  }
  char* p = chunks_.back().get() + used_;
  *p = static_cast<char>(name.size());
  std::memcpy(p + 1, name.data(), name.size());
  at_.push_back(static_cast<std::uint32_t>(((chunks_.size() - 1) << kShift) | used_));
  used_ += 1 + name.size();
  return true;
}

void NameList::append(NameList&& other) {
  if (other.chunks_.empty()) return;
  if (chunks_.size() + other.chunks_.size() > kMostChunks) {  // never with NAME_MAX names < 2^32 B
    for (std::size_t i = 0; i < other.size(); ++i) add(other[i]);
    other = NameList();
    return;
  }
  const auto base = static_cast<std::uint32_t>(chunks_.size() << kShift);
  at_.reserve(at_.size() + other.at_.size());
  for (const std::uint32_t at : other.at_) at_.push_back(base + at);
  for (auto& chunk : other.chunks_) chunks_.push_back(std::move(chunk));
  capacity_ = other.capacity_;
  used_ = other.used_;
  other = NameList();
}

}  // namespace tv
