#include "common/did_you_mean.h"

#include <algorithm>
#include <cstddef>

namespace tv {
namespace {

// Levenshtein distance, for did_you_mean (names of a few dozen characters).
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string did_you_mean(const std::string& word, const std::vector<std::string>& known,
                         const std::string& prefix) {
  const std::size_t limit = std::min<std::size_t>(3, std::max<std::size_t>(1, word.size() / 3));
  const std::string* best = nullptr;
  std::size_t best_distance = limit + 1;
  for (const auto& k : known)
    if (const std::size_t d = edit_distance(word, k); d < best_distance) {
      best = &k;
      best_distance = d;
    }
  return best ? " (did you mean " + prefix + *best + "?)" : "";
}

}  // namespace tv
