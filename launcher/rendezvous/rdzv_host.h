// Whether the rendezvous endpoint's host is this machine: the first half of how a node without a
// node rank finds out that it hosts the coordinator (docs/coordination.md, "Node ranks"); the
// second half is binding the port (RdzvCoordinator::listen). torchrun's c10d rendezvous asks the
// same question (torch/distributed/elastic/rendezvous/utils.py, _matches_machine_hostname).
#pragma once

#include <string>

namespace tv {

// "localhost", a loopback address, this machine's host name, or a name or address that resolves
// to an address of one of this machine's interfaces (getifaddrs). Resolves a name once, blocking
// (before any worker starts); a name that does not resolve is not this machine.
bool is_this_machine(const std::string& host);

}  // namespace tv
