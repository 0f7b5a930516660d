// The preflight's own child processes (probe ranks, the python that locates torch's NCCL):
// posix_spawn in a new process group, output to files or a pipe, and a wait with a deadline that
// kills the group when it passes. Waits only on the pids it started (never waitpid(-1)).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace tv {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] searched on PATH from `envp` when it has no '/'
  std::vector<std::string> envp;  // NAME=value
  std::string stdout_path;        // "" = /dev/null
  std::string stderr_path;        // "" = /dev/null
};

// The child's pid, or -1 with *why.
pid_t spawn_process(const SpawnSpec& spec, std::string* why);

struct ExitStatus {
  bool timed_out = false;
  int code = -1;  // exit code, or 128+signal
};

// Waits for every pid until `deadline`; then SIGKILLs the process groups still running.
std::vector<ExitStatus> wait_all(const std::vector<pid_t>& pids,
                                 std::chrono::steady_clock::time_point deadline);

// Runs argv and returns its stdout (stderr discarded); nullopt when it cannot start, exits
// non-zero or runs past `timeout`.
std::optional<std::string> capture_output(const std::vector<std::string>& argv,
                                          const std::vector<std::string>& envp,
                                          std::chrono::milliseconds timeout);

}  // namespace tv
