// resolve_expected_gpus and nvidia_gpu_functions (health/preflight.h): how many GPUs the
// preflight expects, one rule for `run` and `preflight`.
#include "common/bounded_read.h"
#include "health/preflight.h"

namespace tv {

int nvidia_gpu_functions(const FileSystem& fs, const std::string& dir) {
  int n = 0;
  for (const auto& fn : fs.list(dir)) {
    const auto vendor = fs.read(dir + "/" + fn + "/vendor", kSmallFileCap);
    const auto cls = fs.read(dir + "/" + fn + "/class", kSmallFileCap);
    if (vendor && cls && vendor->starts_with("0x10de") &&
        (cls->starts_with("0x0300") || cls->starts_with("0x0302")))
      ++n;
  }
  return n;
}

int resolve_expected_gpus(int workers, int visible_gpus, int pci_gpus) {
  return visible_gpus > 0 || pci_gpus > 0 ? workers : -1;
}

}  // namespace tv
