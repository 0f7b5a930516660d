// libFuzzer harness for the Slurm hostlist expander: never crashes, and never produces more than
// the cap (hosts and bytes), whatever the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "launcher/topology/slurm_hostlist.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kCap = 10000;  // smaller than production's so each run stays fast
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto hosts = tv::expand_hostlist(text, "SLURM_JOB_NODELIST", kCap);
  if (!hosts) {
    if (hosts.error().message.empty()) std::abort();
    return 0;
  }
  if (hosts->empty() || hosts->size() > kCap) std::abort();
  for (const auto& h : *hosts)
    if (h.empty() || h.size() > tv::kMaxHostNameLength) std::abort();
  return 0;
}
