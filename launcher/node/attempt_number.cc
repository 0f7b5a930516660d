#include "launcher/node/attempt_number.h"

#include <algorithm>

#include "common/parse_number.h"

namespace tv {

int first_free_attempt(const std::vector<std::string>& entries) {
  constexpr std::string_view kPrefix = "attempt_";
  int first = 0;
  for (const auto& name : entries) {
    if (!name.starts_with(kPrefix)) continue;
    const std::string digits = name.substr(kPrefix.size());
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    if (auto k = parse_integer<int>(digits, 0, 999999998)) first = std::max(first, *k + 1);
  }
  return first;
}

}  // namespace tv
