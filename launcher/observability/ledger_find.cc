#include "launcher/observability/ledger_find.h"

#include <algorithm>
#include <string_view>

#include "common/exit_codes.h"

namespace tv {

bool is_ledger_name(const std::string& name) {
  constexpr std::string_view kPrefix = ".trainvisor-ledger-", kSuffix = ".json";
  if (name.size() != kPrefix.size() + 16 + kSuffix.size()) return false;
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return false;
  const std::string_view hex = std::string_view(name).substr(kPrefix.size(), 16);
  return std::all_of(hex.begin(), hex.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Result<std::string> ledger_in_directory(const std::string& dir,
                                        const std::vector<std::string>& names) {
  std::vector<std::string> found;
  std::copy_if(names.begin(), names.end(), std::back_inserter(found), is_ledger_name);
  const std::string base = dir.ends_with('/') ? dir : dir + "/";
  if (found.size() == 1) return base + found[0];
  const std::string expected =
      "expected exactly one job ledger (.trainvisor-ledger-<16 hex digits>.json, which `trainvisor "
      "run` writes in the checkpoint dir of a job with an id)";
  if (found.empty())
    return Error{ErrorKind::kConfig, dir + ": a directory with no job ledger; " + expected};
  std::string list;
  for (const auto& n : found) list += (list.empty() ? "" : ", ") + n;
  return Error{ErrorKind::kConfig, dir + ": a directory with " + std::to_string(found.size()) +
                                       " job ledgers (" + list + "); " + expected +
                                       ": name one with --ledger FILE"};
}

}  // namespace tv
