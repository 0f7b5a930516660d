// SCAFFOLD: replaced by the module's owner in this session.
#include <cstdio>

#include "common/exit_codes.h"
#include "launcher/commands.h"

namespace tv {
int checkpoint_command(const Args&, const Environment&) {
  std::fprintf(stderr, "trainvisor: checkpoint_command is not built yet\n");
  return exit_code::kUsage;
}
}  // namespace tv
