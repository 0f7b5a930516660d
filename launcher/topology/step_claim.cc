#include "launcher/topology/step_claim.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "common/exit_codes.h"

namespace tv {
namespace {

constexpr std::size_t kMaxName = sizeof(sockaddr_un::sun_path) - 1;  // after the leading NUL

std::string fnv1a_hex(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string node_name(const Topology& t, const Environment& env) {
  if (auto n = env.get("SLURMD_NODENAME"); n && !n->empty()) return *n;
  if (t.node_rank >= 0 && static_cast<std::size_t>(t.node_rank) < t.hosts.size())
    return t.hosts[static_cast<std::size_t>(t.node_rank)];
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

std::string step_claim_name(const std::string& job_id, const std::string& node) {
  std::string name = "trainvisor-slurm-";
  name += job_id;
  name += '-';
  name += node;
  if (name.size() <= kMaxName) return name;
  return "trainvisor-slurm-" + fnv1a_hex(name);
}

Result<UniqueFd> claim_slurm_step(const Topology& t, const Environment& env) {
  if (t.platform != Platform::kSlurm) return UniqueFd(-1);
  const std::string node = node_name(t, env);
  const std::string name = step_claim_name(t.job_id, node);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid())
    return Error{ErrorKind::kOsError,
                 std::string("the Slurm step's claim: socket(AF_UNIX): ") + std::strerror(errno)};
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len) == 0) return fd;
  if (errno != EADDRINUSE)
    return Error{ErrorKind::kOsError,
                 "the Slurm step's claim @" + name + ": bind: " + std::strerror(errno)};
  std::string msg = "another trainvisor already runs in Slurm step ";
  msg += t.job_id;
  msg += " on node ";
  msg += node;
  msg += " (it holds the abstract socket @";
  msg += name;
  msg +=
      "): expected one trainvisor per node and step, which starts the node's workers itself "
      "(srun --ntasks-per-node=1 trainvisor run --nproc-per-node N ...); two would share the "
      "master port, the rendezvous port and the checkpoint directory";
  return Error{ErrorKind::kConfig, msg};
}

}  // namespace tv
