// `trainvisor report --ledger DIR`: the one job ledger in a directory (a checkpoint dir), found by
// its name (launcher/observability/ledger_file.h: .trainvisor-ledger-<16 hex digits>.json; a
// `.corrupt` one set aside or a temporary name is not one). Pure: the directory's entry names in,
// the ledger's path or one error out.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace tv {

// Whether `name` is a job ledger's file name.
bool is_ledger_name(const std::string& name);

// `dir`/<the one ledger among `names`>; none or several: one error (exit 78) naming the directory,
// what was found and what was expected.
Result<std::string> ledger_in_directory(const std::string& dir,
                                        const std::vector<std::string>& names);

}  // namespace tv
