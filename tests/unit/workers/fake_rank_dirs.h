// FakeRankDirs: the RankDirs seam (launcher/workers/rank_dirs.h) over the test's temporary work
// dir, opened as the real one opens it, except the rank directories a test refuses (as a link
// planted at attempt_<a> or another user's directory would be). It records each stale file the
// Supervisor clears, in order, and clears it.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/exit_codes.h"
#include "launcher/workers/rank_dirs.h"

namespace tv::testing {

class FakeRankDirs final : public RankDirs {
 public:
  Result<UniqueFd> open(const std::string& work_dir, int attempt, int rank) const override {
    if (refused_.count({attempt, rank}))
      return Error{ErrorKind::kConfig,
                   rank_dir_path(work_dir, attempt, rank) + ": a symbolic link, not followed"};
    return real_.open(work_dir, attempt, rank);
  }
  void remove_stale(int dir_fd, const std::string& name) const override {
    removed_.push_back(name);
    real_.remove_stale(dir_fd, name);
  }

  void refuse(int attempt, int rank) { refused_.insert({attempt, rank}); }
  const std::vector<std::string>& removed() const { return removed_; }

 private:
  RealRankDirs real_;
  std::set<std::pair<int, int>> refused_;
  mutable std::vector<std::string> removed_;
};

}  // namespace tv::testing
