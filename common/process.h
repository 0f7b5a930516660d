// What every child process of trainvisor is made from, in one place: the spawn request, the one
// PATH lookup, and the one decoder of wait statuses. Starting a child is Init::spawn
// (common/init.h), the only spawner; nothing else forks.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/environment.h"
#include "common/result.h"

namespace tv {

struct SpawnRequest {
  std::string executable;         // resolved path (find_executable)
  std::vector<std::string> argv;  // argv[0] included (replaced by executable, as torchrun does)
  Environment env;
  int stdin_fd = -1;  // -1: /dev/null. The spawner does not close any of them.
  int stdout_fd = -1;
  int stderr_fd = -1;
  // SIGUSR1/SIGUSR2 ignored from the start (a warm standby: a step-wide "checkpoint now" is not
  // meant for it; it restores them when it becomes a worker, docs/standby.md).
  bool ignore_user_signals = false;
  // Runs beside the workers, never ahead of them: nice 19 from before its exec. The GPU health
  // watch and the side queries (docs/health.md, "GPU health while training").
  bool background = false;
};

// The one PATH lookup: `name` itself when it has a '/', else the first executable file named
// `name` in PATH (from `env`; /usr/local/bin:/usr/bin:/bin when unset). Errors: 127 when nothing
// is found (naming the PATH searched), 126 when the file is a directory or not executable.
Result<std::string> find_executable(const std::string& name, const Environment& env);

// The one wait-status decoder: the exit code, or 128+N for a death by signal N.
int exit_code_from_status(int wait_status);
// The signal that ended the process, 0 when it exited.
int signal_from_status(int wait_status);

}  // namespace tv
