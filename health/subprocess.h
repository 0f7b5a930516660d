// The preflight's child processes (probe ranks, the python that locates torch's NCCL, the
// vendor-library queries): started through ChildGroup (common/children.h), so Init spawns and
// reaps them and a deadline kills them; output goes to files.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/children.h"
#include "common/environment.h"
#include "common/result.h"

namespace tv {

// Starts argv (argv[0] looked up on the PATH of `env`) in `group` with stdin /dev/null and
// stdout/stderr truncated into the given files ("" = /dev/null).
Result<pid_t> spawn_to_files(ChildGroup& group, const std::vector<std::string>& argv,
                             const Environment& env, const std::string& stdout_path,
                             const std::string& stderr_path);

// Runs argv and returns its stdout (stderr discarded); nullopt when it cannot start, exits
// non-zero or runs past `timeout` (then it is killed).
std::optional<std::string> capture_output(const std::vector<std::string>& argv,
                                          const Environment& env,
                                          std::chrono::milliseconds timeout);

// A child's output file, read with common/bounded_read.h's cap for logs (kLogFileCap): "" when it
// cannot be read, is not a regular file or is larger.
std::string read_output_file(const std::string& path);

}  // namespace tv
