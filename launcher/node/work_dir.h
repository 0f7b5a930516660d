// WorkDir: the run's work directory and its one owner. The workers' error files, heartbeats and
// stacks live in it, and with --log-dir their per-rank logs (docs/supervision.md, "Files
// trainvisor creates"). A --log-dir is created when missing, said once when other users can write
// it without the sticky bit, and generation 0 writes past the attempt_<k> an earlier container
// left in it (attempt_number.h). With none: a private temporary directory under TMPDIR, removed
// with everything in it when the WorkDir goes.
#pragma once

#include <optional>
#include <string>

#include "common/environment.h"
#include "common/options.h"
#include "common/result.h"

namespace tv {

class WorkDir {
 public:
  WorkDir() = default;
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  ~WorkDir();

  // `log_dir`: --log-dir's value and where it came from (nullopt: a temporary directory);
  // `cwd`: where a relative path is (common/file_system.h: absolute_path). An error (78) names
  // the option or TMPDIR, its value and what was expected.
  Status open(const std::optional<OptionValue>& log_dir, const Environment& env,
              const std::string& cwd);

  const std::string& path() const { return path_; }
  bool temporary() const { return temporary_; }
  int first_attempt() const { return first_attempt_; }  // generation 0's attempt_<k>

 private:
  std::string path_;
  bool temporary_ = false;
  int first_attempt_ = 0;
};

}  // namespace tv
