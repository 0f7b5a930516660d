// The claim of one node of one Slurm step: trainvisor is one task per node and step (it starts the
// node's workers itself), and two in one step on one node would share the master port, the
// rendezvous port and the checkpoint directory. `srun --ntasks-per-node=2` is refused from the
// environment (topology_slurm.cc); two trainvisors in one task (`srun bash -c 'trainvisor run ...
// & trainvisor run ...'`) or in two steps that claim one step id cannot be seen there, so each one
// binds an abstract Unix socket named for the step and the node (`@trainvisor-slurm-J.S-NODE`).
// The kernel releases it when the process ends however it ends (SIGKILL included): no file is left
// behind to go stale. Abstract sockets belong to the network namespace, which enroot/pyxis
// containers share with their host, so the claim holds across the containers of one node; the
// node's name is part of the name, so several slurmd of one host (the test cluster) do not meet.
#pragma once

#include <string>

#include "common/environment.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "launcher/topology/topology.h"

namespace tv {

// The socket's name (without the leading NUL): "trainvisor-slurm-<job id>-<node>", a hash of it
// when longer than an abstract name may be.
std::string step_claim_name(const std::string& job_id, const std::string& node);

// Outside a Slurm topology: an invalid fd, nothing claimed. Otherwise the bound socket (close-on-
// exec: workers do not inherit it), held until the process ends; 78 when another process holds
// the claim, naming the step, the node and the socket.
Result<UniqueFd> claim_slurm_step(const Topology& t, const Environment& env);

}  // namespace tv
