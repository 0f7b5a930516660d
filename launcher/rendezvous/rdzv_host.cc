#include "launcher/rendezvous/rdzv_host.h"

#include <ifaddrs.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ip/address.hpp>
#include <memory>
#include <set>

namespace tv {
namespace {

namespace ip = boost::asio::ip;

std::set<ip::address> interface_addresses() {
  std::set<ip::address> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> own(list, &::freeifaddrs);
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    if (i->ifa_addr->sa_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      out.insert(ip::address_v4(ntohl(a->sin_addr.s_addr)));
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
      ip::address_v6::bytes_type b;
      std::copy(a->sin6_addr.s6_addr, a->sin6_addr.s6_addr + 16, b.begin());
      out.insert(ip::address_v6(b, a->sin6_scope_id));
    }
  }
  return out;
}

bool local_address(const ip::address& a, const std::set<ip::address>& mine) {
  if (a.is_loopback() || mine.count(a)) return true;
  // An IPv4 address written as IPv6 (::ffff:10.0.0.1).
  return a.is_v6() && a.to_v6().is_v4_mapped() &&
         local_address(ip::make_address_v4(ip::v4_mapped, a.to_v6()), mine);
}

// The host's addresses (getaddrinfo, blocking); empty when it does not resolve.
std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> lookup(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) found = nullptr;
  return {found, &::freeaddrinfo};
}

}  // namespace

bool is_this_machine(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto literal = ip::make_address(host, ec);
  const auto mine = interface_addresses();
  if (!ec) return local_address(literal, mine);
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0 && host == name) return true;
  const auto found = lookup(host);
  for (addrinfo* i = found.get(); i; i = i->ai_next) {
    char text[NI_MAXHOST] = {};
    if (::getnameinfo(i->ai_addr, i->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST))
      continue;
    const auto a = ip::make_address(text, ec);
    if (!ec && local_address(a, mine)) return true;
  }
  return false;
}

AddressFamilies resolved_families(const std::string& host) {
  AddressFamilies out;
  const auto found = lookup(host);
  for (addrinfo* i = found.get(); i; i = i->ai_next) {
    out.v4 = out.v4 || i->ai_family == AF_INET;
    out.v6 = out.v6 || i->ai_family == AF_INET6;
  }
  return out;
}

std::string coordinator_listen_address(const std::string& master, const std::string& bind_addr,
                                       AddressFamilies resolved) {
  if (bind_addr != "0.0.0.0") return bind_addr;
  boost::system::error_code ec;
  const auto literal = ip::make_address(master, ec);
  if (!ec) {
    if (literal.is_loopback()) return master;
    return literal.is_v6() ? "::" : "0.0.0.0";
  }
  return resolved.v6 ? "::" : "0.0.0.0";
}

}  // namespace tv
