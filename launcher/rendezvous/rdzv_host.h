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

// The address families a host name resolves to (getaddrinfo, blocking: before any worker
// starts); neither when it does not resolve.
struct AddressFamilies {
  bool v4 = false;
  bool v6 = false;
};
AddressFamilies resolved_families(const std::string& host);

// Where the coordinator listens for a job whose master is `master` (--master-addr or the
// --rdzv-endpoint host), when `bind_addr` is the default "0.0.0.0"; another bind_addr is kept.
// A loopback address: itself (the job runs on one machine). An IPv6 address, or a name that
// resolves to IPv6 (only, or IPv6 and IPv4): "::", dual stack (the listener turns IPV6_V6ONLY
// off), so agents reach it over either family. An IPv4 address, a name that resolves to IPv4
// only, or one that does not resolve: "0.0.0.0". `resolved` is looked at for a name only.
std::string coordinator_listen_address(const std::string& master, const std::string& bind_addr,
                                       AddressFamilies resolved);

}  // namespace tv
