// HostAddress: this node's own IPv4 address, for AWS Batch's main node (Batch tells the child
// nodes where the main node is, but not the main node itself).
//
// RealHostAddress asks getifaddrs() and takes the first interface that is up, not loopback, with
// an IPv4 address that is not link-local (169.254/16). Never DNS, never a socket.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace tv {

class HostAddress {
 public:
  virtual ~HostAddress() = default;
  // The dotted IPv4 address, or an error that says what was looked at.
  virtual Result<std::string> ipv4() const = 0;
  // Where the address came from, e.g. "interface eth0 (getifaddrs)".
  virtual std::string describe() const = 0;
};

struct InterfaceAddress {
  std::string name;
  bool up = false;
  bool loopback = false;
  std::string ipv4;  // "" when the entry is not IPv4
};

// The pure selection rule over getifaddrs()' entries, in order. Returns the index or -1.
int pick_interface(const std::vector<InterfaceAddress>& ifs);

class RealHostAddress final : public HostAddress {
 public:
  Result<std::string> ipv4() const override;
  std::string describe() const override;
};

}  // namespace tv
