// `trainvisor __query KIND [ARG]`: the child side of health/isolated_query.h.
#include <optional>

#include "cli/commands.h"
#include "common/init.h"
#include "health/isolated_query.h"

namespace tv {

int query_command(const Args& args, const Environment& env) {
  // The GPU health watch lives until trainvisor SIGKILLs it (or dies: PDEATHSIG). A stop signal
  // sent to every process of a Slurm step (scancel, the time limit) is trainvisor's to act on:
  // ended by it, the watch would leave the grace period unwatched and be started again.
  std::optional<Init::Route> keep_watching;
  if (!args.empty() && args[0] == "gpu-watch")
    keep_watching.emplace(Init::instance().route_signals([](int) {}));
  return vendor_query_main(args, env);
}

}  // namespace tv
