#include "health/nccl_locate.h"

#include "health/subprocess.h"

namespace tv {
namespace {

// Looks beside the packages the way torch's libtorch_cuda RUNPATH does ($ORIGIN/../../nvidia/
// nccl/lib), without importing torch (seconds) or CUDA.
constexpr const char* kScript = R"PY(
import glob, importlib.util as u, os
def locs(name):
    try:
        s = u.find_spec(name)
    except Exception:
        return []
    return list(s.submodule_search_locations or []) if s else []
cands = []
for d in locs('nvidia.nccl'):
    cands += sorted(glob.glob(os.path.join(d, 'lib', 'libnccl.so*')))
for d in locs('nvidia'):
    cands += sorted(glob.glob(os.path.join(d, '*', 'lib', 'libnccl.so*')))
for d in locs('torch'):
    cands += sorted(glob.glob(os.path.join(d, 'lib', 'libnccl*.so*')))
if not cands and locs('torch'):
    # A torch whose NCCL is elsewhere: load it and ask the process which libnccl it mapped.
    import torch
    try:
        torch.cuda.nccl.version()
    except Exception:
        pass
    for line in open('/proc/self/maps'):
        if 'libnccl' in line and '/' in line:
            cands.append(line.split()[-1])
            break
if cands:
    print(os.path.realpath(cands[0]))
)PY";

std::string base_name(const std::string& p) {
  auto slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::optional<std::string> worker_python(const std::vector<std::string>& cmd,
                                         const Environment& env) {
  if (cmd.empty()) return std::nullopt;
  if (base_name(cmd[0]).rfind("python", 0) == 0) return cmd[0];
  if (ends_with(cmd[0], ".py") || cmd[0] == "-m") return env.get("PYTHON_EXEC").value_or("python3");
  return std::nullopt;
}

std::optional<std::string> torch_nccl_path(const std::string& python, const Environment& env) {
  auto out = capture_output({python, "-c", kScript}, env, std::chrono::seconds(60));
  if (!out) return std::nullopt;
  while (!out->empty() && (out->back() == '\n' || out->back() == ' ')) out->pop_back();
  if (out->empty()) return std::nullopt;
  return out;
}

NcclLocation locate_worker_nccl(const std::vector<std::string>& cmd, const Environment& env,
                                const std::optional<std::string>& nccl_lib) {
  if (nccl_lib) return {*nccl_lib, "--nccl-lib"};
  if (auto py = worker_python(cmd, env)) {
    if (auto path = torch_nccl_path(*py, env)) return {*path, "torch's (found by " + *py + ")"};
    return {"libnccl.so.2", "library search path (" + *py + " has no NCCL beside torch)"};
  }
  return {"libnccl.so.2", "library search path"};
}

}  // namespace tv
