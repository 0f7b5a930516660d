// The rank directories a generation's workers write in, <work dir>/attempt_<a>/rank_<r>, each
// step a directory of trainvisor's own (common/own_dir.h). The Supervisor opens them and clears
// a stale file in them only through this seam: its unit tests drive a refused directory (a link
// planted at attempt_<a>, another user's directory, a read-only log dir) with a fake
// (tests/unit/workers/fake_rank_dirs.h). RealRankDirs is the one implementation that touches
// the disk.
#pragma once

#include <string>

#include "common/result.h"
#include "common/unique_fd.h"

namespace tv {

// <work_dir>/attempt_<attempt>/rank_<rank>: the path workers and messages are given.
std::string rank_dir_path(const std::string& work_dir, int attempt, int rank);

class RankDirs {
 public:
  virtual ~RankDirs() = default;
  // An open descriptor of the rank directory, each step made when absent; refused (78) naming the
  // path and why.
  virtual Result<UniqueFd> open(const std::string& work_dir, int attempt, int rank) const = 0;
  // Removes `name` from an open rank directory where an earlier run left it (absent is fine).
  virtual void remove_stale(int dir_fd, const std::string& name) const = 0;
};

class RealRankDirs final : public RankDirs {
 public:
  Result<UniqueFd> open(const std::string& work_dir, int attempt, int rank) const override;
  void remove_stale(int dir_fd, const std::string& name) const override;
};

const RankDirs& real_rank_dirs();

}  // namespace tv
