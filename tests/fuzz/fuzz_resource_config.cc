// libFuzzer harness for SageMaker's resource config parser: never crashes; an accepted file
// always yields a rank inside its host list.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "launcher/topology/resource_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto rc = tv::parse_resource_config(text, "resourceconfig.json");
  if (!rc) {
    if (rc.error().message.empty()) std::abort();
    return 0;
  }
  if (rc->training_hosts.empty() || rc->rank < 0 ||
      static_cast<size_t>(rc->rank) >= rc->training_hosts.size() ||
      rc->training_hosts[static_cast<size_t>(rc->rank)] != rc->current_host)
    std::abort();
  return 0;
}
