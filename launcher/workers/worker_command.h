// The workers' command line, torchrun style: `script.py ARGS` runs under `PY -u` (PY is the
// image's interpreter: find_interpreter), `-m MOD ARGS` runs a module, `--no-python CMD ARGS` and
// any first word that is not a .py file run as given. Never through a shell.
#pragma once

#include <string>
#include <vector>

#include "common/environment.h"
#include "common/file_system.h"
#include "common/options.h"
#include "common/result.h"

namespace tv {

// Isaac Sim images run Python through this launcher script (their `python3` is not Isaac Sim's).
inline constexpr const char* kIsaacSimPython = "/isaac-sim/python.sh";

// The interpreter of `script.py` and `-m MOD`, and where it came from (the start banner says it).
struct Interpreter {
  std::string path;
  std::string origin;
};

// $PYTHON_EXEC when set and not empty, else Isaac Sim's `isaac_sim` when it exists, else python3
// (looked up on PATH).
Interpreter find_interpreter(const Environment& env, const FileSystem& fs,
                             const std::string& isaac_sim = kIsaacSimPython);

// argv for every worker (before --resume-arg is appended), Python forms under `python`. Usage
// error (64) when empty.
Result<std::vector<std::string>> build_worker_argv(const Options& opts, const std::string& python);

// For `script.py ARGS` (no -m, no --no-python): the script must exist and not be a directory
// before anything starts, or the run ends with 127 naming it (python3 itself would exit 2, which
// reads as a training failure and is restarted).
Status check_python_script(const Options& opts, const FileSystem& fs);

// "--checkpoint={}" with path -> "--checkpoint=/ckpt/agent_100.pt"; a template without {}
// gets the path as a separate argument after it.

}  // namespace tv
