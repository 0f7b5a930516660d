#include "launcher/topology/topology_options.h"

#include "launcher/topology/topology.h"

namespace tv {

std::vector<OptionSpec> topology_option_specs() {
  using T = OptionType;
  return {
      {.name = "platform",
       .type = T::kChoice,
       .help = "where the topology comes from",
       .default_value = "auto",
       .words = {"auto", "sagemaker", "kubeflow", "batch", "slurm", "local"}},
      {.name = "standalone", .type = T::kFlag, .help = "same as --platform local"},
      // Text: PET_NNODES may be torchrun's MIN:MAX, which the kubeflow source reads; an explicit
      // --nnodes is an integer from 1 to 100000 (launcher/topology/topology.cc).
      {.name = "nnodes",
       .help = "number of nodes, 1 to 100000; under a platform it must be the platform's",
       .from_pet = true,
       .metavar = "N"},
      {.name = "spare-nodes",
       .type = T::kInt,
       .help = "hot spare nodes beyond --nnodes N: they join, pass the preflight and wait; a lost "
               "node's rank goes to one at the next generation (WORLD_SIZE unchanged); node ranks "
               "0 to N+K-1 (docs/coordination.md, \"Hot spare nodes\")",
       .default_value = "0",
       .max = kMaxNodes - 1},
      {.name = "node-rank",
       .type = T::kInt,
       .help = "this node's rank; under a platform it must be the platform's; when no option "
               "and no platform gives one, the node that hosts the rendezvous is 0 and the others "
               "are assigned in join order",
       .max = kMaxNodes - 1,
       .from_pet = true},
      {.name = "master-addr",
       .help = "address of node rank 0 (over a platform's: the rest stays the platform's)",
       .from_pet = true,
       .metavar = "HOST"},
      {.name = "master-port",
       .type = T::kInt,
       .help = "workers' rendezvous port (default 29500, or derived from the job id)",
       .min = 1,
       .max = 65535,
       .from_pet = true},
      {.name = "nproc-per-node",
       .type = T::kInt,
       .help = "workers on this node (auto, gpu: the visible GPUs, else 1)",
       .default_value = "auto",
       .min = 1,
       .max = 4096,
       .words = {"auto", "gpu"},
       .from_pet = true},
      {.name = "instance-groups",
       .help = "SageMaker heterogeneous cluster: the instance groups that train (the others' "
               "containers exit 0 at once); default: the hyperparameter "
               "sagemaker_distribution_instance_groups, else every group",
       .metavar = "NAME[,NAME]"},
      {.name = "instance-type",
       .help = "this node's EC2 instance type (p4d.24xlarge, ml.p5.48xlarge): with more than one "
               "node, a type known to have EFA makes --require-transport auto mean efa; "
               "default: SageMaker's resource config, else unknown",
       .metavar = "TYPE"},
      {.name = "resource-config",
       .help = "SageMaker's host list (hyperparameters.json beside it, code in ../../code)",
       .default_value = "/opt/ml/input/config/resourceconfig.json",
       .metavar = "PATH"},
  };
}

}  // namespace tv
