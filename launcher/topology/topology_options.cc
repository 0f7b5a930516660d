#include "launcher/topology/topology_options.h"

namespace tv {

std::vector<OptionSpec> topology_option_specs() {
  return {
      {"platform", true, "auto", "auto|sagemaker|kubeflow|batch|slurm|local"},
      {"standalone", false, std::nullopt, "same as --platform local"},
      {"nnodes", true, std::nullopt, "number of nodes (explicit topology)", true},
      {"node-rank", true, std::nullopt, "this node's rank (explicit topology)", true},
      {"master-addr", true, std::nullopt, "address of node rank 0 (explicit topology)", true},
      {"master-port", true, std::nullopt, "workers' rendezvous port (default 29500)", true},
      {"nproc-per-node", true, "auto", "workers on this node: N or auto (visible GPUs, else 1)",
       true},
      {"resource-config", true, "/opt/ml/input/config/resourceconfig.json",
       "SageMaker's host list"},
  };
}

}  // namespace tv
