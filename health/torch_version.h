// Which torch the workers will import, without importing it (seconds, CUDA) and never in PID 1:
// a child of the workers' python finds the package the way its import system would
// (importlib.util.find_spec, which does not run torch's __init__) and reads `__version__` from
// torch/version.py as text. The worker environment follows that version (docs/torchrun.md,
// "The environment"). The same child reads what else the node fingerprint compares across nodes
// (docs/coordination.md, "Node fingerprint"): the CUDA torch was built for (`cuda` in the same
// version.py) and the NCCL wheel beside it (the nvidia-nccl-cu* dist-info's version), without a
// second child. Asked about a `-m MODULE` too, it says whether the module's top-level package can
// be found at all (find_spec of a top-level name runs none of the user's code), so `run` refuses a
// module that is not there before any worker starts (127), as it refuses a missing script.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "common/environment.h"

namespace tv {

struct TorchVersion {
  int major = 0;
  int minor = 0;
  std::string text;  // as torch/version.py says, e.g. "2.11.0+cu128"
  std::string cuda;  // version.py's `cuda` ("12.8"); "" for a CPU build or when absent
  std::string nccl;  // the nvidia-nccl-cu* wheel beside torch ("2.26.2"); "" when none
};

// The child's answer: the version on the first line, then "cuda=..." and "nccl=..." lines.
std::optional<TorchVersion> parse_torch_answer(const std::string& output);

// "2.11.0+cu128" -> {2, 11}; nullopt for anything that does not start with MAJOR.MINOR.
std::optional<TorchVersion> parse_torch_version(const std::string& text);

// The child's whole answer: its torch, and for a module asked about, whether the module's
// top-level package is there.
struct WorkersPython {
  std::optional<TorchVersion> torch;
  std::optional<bool> module_found;  // nullopt: no module asked, or no answer (never refused)
};

// parse_torch_answer's lines, and a "module=found|missing" line anywhere among them.
WorkersPython parse_python_answer(const std::string& output);

// Asks `python` (a child with `timeout`), about `module` too when it is not ""; both nullopt when
// it cannot run or is late.
WorkersPython ask_workers_python(const std::string& python, const Environment& env,
                                 const std::string& module = "",
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace tv
