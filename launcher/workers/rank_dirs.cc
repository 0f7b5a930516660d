#include "launcher/workers/rank_dirs.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/exit_codes.h"
#include "common/own_dir.h"

namespace tv {

std::string rank_dir_path(const std::string& work_dir, int attempt, int rank) {
  return work_dir + "/attempt_" + std::to_string(attempt) + "/rank_" + std::to_string(rank);
}

Result<UniqueFd> RealRankDirs::open(const std::string& work_dir, int attempt, int rank) const {
  const UniqueFd work(::open(work_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!work.valid())
    return Error{ErrorKind::kConfig, work_dir + ": cannot open (" + std::strerror(errno) + ")"};
  const std::string name = "attempt_" + std::to_string(attempt);
  auto a = open_own_directory(work.get(), name, work_dir + "/" + name);
  if (!a) return a.error();
  return open_own_directory(a->get(), "rank_" + std::to_string(rank),
                            rank_dir_path(work_dir, attempt, rank));
}

void RealRankDirs::remove_stale(int dir_fd, const std::string& name) const {
  ::unlinkat(dir_fd, name.c_str(), 0);
}

const RankDirs& real_rank_dirs() {
  static const RealRankDirs dirs;
  return dirs;
}

}  // namespace tv
