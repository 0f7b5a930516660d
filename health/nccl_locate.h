// Which libnccl the workers will load: --nccl-lib when given; torch's own (the nvidia-nccl wheel
// beside it, or torch/lib) when the worker command is python, asked of that python's import
// system; else `libnccl.so.2` through the library search path.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"

namespace tv {

struct NcclLocation {
  std::string library;  // a path or a soname for dlopen
  std::string how;      // "--nccl-lib", "torch (python3)", "library search path"
};

// The python interpreter that runs the worker command, if it is python: argv[0] named python*,
// or a first word ending in .py (run under $PYTHON_EXEC or python3).
std::optional<std::string> worker_python(const std::vector<std::string>& worker_command,
                                         const Environment& env);

NcclLocation locate_worker_nccl(const std::vector<std::string>& worker_command,
                                const Environment& env, const std::optional<std::string>& nccl_lib);

// Asks `python` where torch's libnccl is; nullopt when it has none beside it.
std::optional<std::string> torch_nccl_path(const std::string& python, const Environment& env);

}  // namespace tv
