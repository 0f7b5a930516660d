#include "launcher/topology/host_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>

#include "common/exit_codes.h"

namespace tv {
namespace {

std::vector<InterfaceAddress> list_interfaces(std::string* why) {
  std::vector<InterfaceAddress> out;
  ifaddrs* head = nullptr;
  if (getifaddrs(&head) != 0) {
    *why = std::string("getifaddrs failed: ") + std::strerror(errno);
    return out;
  }
  for (ifaddrs* a = head; a; a = a->ifa_next) {
    InterfaceAddress e{a->ifa_name ? a->ifa_name : "", (a->ifa_flags & IFF_UP) != 0,
                       (a->ifa_flags & IFF_LOOPBACK) != 0, ""};
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET) {
      char buf[INET_ADDRSTRLEN] = {};
      const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
      if (inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf)) e.ipv4 = buf;
    }
    out.push_back(std::move(e));
  }
  freeifaddrs(head);
  return out;
}

struct Lookup {
  std::string addr, name, why;
};

Lookup lookup() {
  Lookup l;
  auto ifs = list_interfaces(&l.why);
  int i = pick_interface(ifs);
  if (i >= 0) {
    l.addr = ifs[static_cast<size_t>(i)].ipv4;
    l.name = ifs[static_cast<size_t>(i)].name;
  } else if (l.why.empty()) {
    l.why = "no interface is up with a non-loopback, non-link-local IPv4 address (" +
            std::to_string(ifs.size()) + " getifaddrs entries)";
  }
  return l;
}

}  // namespace

int pick_interface(const std::vector<InterfaceAddress>& ifs) {
  for (size_t i = 0; i < ifs.size(); ++i) {
    const auto& e = ifs[i];
    if (!e.up || e.loopback || e.ipv4.empty()) continue;
    if (e.ipv4.starts_with("169.254.") || e.ipv4.starts_with("127.")) continue;
    return static_cast<int>(i);
  }
  return -1;
}

Result<std::string> RealHostAddress::ipv4() const {
  Lookup l = lookup();
  if (l.addr.empty()) return Error{ErrorKind::kConfig, "this node's own address: " + l.why};
  return l.addr;
}

std::string RealHostAddress::describe() const {
  Lookup l = lookup();
  return l.addr.empty() ? "getifaddrs: " + l.why : "interface " + l.name + " (getifaddrs)";
}

}  // namespace tv
