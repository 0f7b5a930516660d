// The platforms trainvisor knows, one row each (docs/platforms/README.md): its name, the window
// between its SIGTERM and its SIGKILL (and trainvisor's default grace period there). How each
// platform is detected and its topology read (its node count, rank, hosts and job id) is
// launcher/topology's row of the same platform (topology.cc, kSources, over topology_<name>.cc).
// Adding a platform: an enumerator and its row here, its source file and its row there.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "common/stop_window.h"

namespace tv {

enum class Platform {
  kLocal,     // no platform detected and no explicit topology: one node
  kExplicit,  // no platform detected; --nnodes/--node-rank/--master-addr make the topology
  kSageMaker,
  kKubeflow,
  kBatch,
  kSlurm,
};

struct PlatformRow {
  Platform id;
  std::string_view name;  // as --platform, the banner and `trainvisor topology` say it
  StopWindow stop;        // outside Kubernetes (a plain container: docker stop's window)
};

// Every row, in the order `--platform auto` detects them (local and explicit first: no detection).
std::span<const PlatformRow> platforms();
const PlatformRow& platform_row(Platform p);
inline std::string_view platform_name(Platform p) { return platform_row(p).name; }
std::optional<Platform> platform_named(std::string_view name);

// The window where `p` runs; in a Kubernetes pod (KUBERNETES_SERVICE_HOST), a container without a
// platform of its own gets Kubernetes' window.
StopWindow stop_window(Platform p, bool in_kubernetes);
// The same by name (`render`'s targets): an unknown name is a plain container.
StopWindow stop_window(std::string_view platform, bool in_kubernetes);

}  // namespace tv
