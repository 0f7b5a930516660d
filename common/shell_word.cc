#include "common/shell_word.h"

#include <algorithm>

namespace tv {

std::string shell_word(std::string_view word) {
  auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_./:=@%+,-").find(c) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), safe)) return std::string(word);
  std::string q = "'";
  for (char ch : word) {
    if (ch == '\'')
      q += "'\\''";
    else
      q += ch;
  }
  q += '\'';
  return q;
}

}  // namespace tv
