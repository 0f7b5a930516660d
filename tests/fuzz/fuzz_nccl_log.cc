// libFuzzer harness for the NCCL log classifier: any bytes must classify without crashing, and
// the transport must be one of the documented values.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "health/nccl_log.h"
#include "common/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto s = tv::classify_nccl_log(std::string_view(reinterpret_cast<const char*>(data), size));
  static const std::string kKnown[] = {"p2p", "shm",     "socket", "ib",     "ofi",
                                       "efa", "efa-gdr", "failed", "unknown"};
  bool known = false;
  for (const auto& k : kKnown) known |= s.transport == k;
  if (!known) std::abort();
  (void)tv::json_text(tv::summary_to_json(s));
  return 0;
}
