#include "health/transport.h"

#include <algorithm>

#include "common/instance_facts.h"

namespace tv {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool is_tcp_provider(const std::optional<std::string>& provider) {
  if (!provider) return false;
  const std::string p = lower(*provider);
  return p.find("tcp") != std::string::npos || p.find("sockets") != std::string::npos ||
         p.find("udp") != std::string::npos;
}

std::string describe(const NcclLogSummary& log) {
  std::string d = "NCCL used " + log.transport;
  if (log.transport == "ofi" || log.transport == "efa" || log.transport == "efa-gdr") {
    d += " (libfabric provider " + log.provider.value_or("?");
    if (log.nic_count) d += ", " + std::to_string(*log.nic_count) + " NICs";
    d += ")";
  }
  if (log.transport == "socket") d += " (NET/Socket: TCP)";
  return d;
}

bool accepted(const NcclLogSummary& log, TransportRule required) {
  const std::string& t = log.transport;
  if (required == TransportRule::kAny) return true;
  if (required == TransportRule::kEfa) return t == "efa" || t == "efa-gdr";
  // net
  if (t == "ib" || t == "efa" || t == "efa-gdr") return true;
  return t == "ofi" && log.provider && !is_tcp_provider(log.provider);
}

std::string join_findings(const NcclLogSummary& log) {
  std::string out;
  for (const auto& f : log.findings) out += " Found: " + f + ".";
  return out;
}

TransportVerdict failed_init(const NcclLogSummary& log) {
  std::string msg = "NCCL did not initialize";
  if (!log.warnings.empty()) msg += ": " + log.warnings.front();
  // Two appends, not `"." + join_findings(log)`: GCC 12 at -O3 warns (-Wrestrict) on
  // operator+(const char*, std::string&&), a known false positive (GCC bug 105651).
  msg += '.';
  msg += join_findings(log);
  return {Outcome::kFail, msg};
}

}  // namespace

const std::string& efa_fallback_causes() {
  static const std::string text =
      "Usual causes: /dev/infiniband/uverbs* not passed into the container (Kubernetes: request "
      "the "
      "vpc.amazonaws.com/efa resource; docker: --device /dev/infiniband/uverbs0 ...); mlx5 devices "
      "exposed beside the EFA ones; a second libfabric earlier on the library path (put "
      "/opt/amazon/efa/lib first in LD_LIBRARY_PATH); a libfabric older than the plugin needs "
      "(aws-ofi-nccl 1.18 needs libfabric >= 1.22); the aws-ofi-nccl plugin not found (NCCL looks "
      "for libnccl-net.so, newer plugins install libnccl-net-ofi.so: set NCCL_NET_PLUGIN=ofi or "
      "add "
      "a libnccl-net.so link); a libcudart the plugin cannot load; or NCCL_NET_PLUGIN=none.";
  return text;
}

TransportVerdict judge_transport(const NcclLogSummary& log, TransportRule required) {
  if (log.transport == "failed") return failed_init(log);
  if (log.transport == "unknown") {
    const std::string msg =
        "the NCCL log shows no channel (was it written with NCCL_DEBUG=INFO and "
        "NCCL_DEBUG_SUBSYS including INIT,NET?)";
    return {required == TransportRule::kAny ? Outcome::kWarn : Outcome::kFail, msg};
  }
  if (accepted(log, required)) {
    std::string msg =
        describe(log) + ", accepted by --require-transport " + transport_word(required);
    if (log.transport == "efa") msg += "; GPUDirect RDMA is off (no /GDRDMA channel)";
    return {Outcome::kPass, msg};
  }
  std::string msg =
      describe(log) + ", but --require-transport " + transport_word(required) + " needs ";
  msg += required == TransportRule::kEfa ? "aws-ofi-nccl over libfabric's efa provider"
                                         : "an RDMA network (EFA or InfiniBand), not TCP";
  if (log.transport == "p2p" || log.transport == "shm")
    msg +=
        "; no network was used: the ranks talked within one node (the preflight's "
        "--single-node-net makes one node's GPUs use the network)";
  msg += '.';  // piece by piece: GCC 12 -O3 -Wrestrict on "." + std::string&& (GCC bug 105651)
  msg += join_findings(log);
  msg += ' ';
  msg += efa_fallback_causes();
  return {Outcome::kFail, msg};
}

TransportDecision decide_require_transport(TransportRule requested, const TransportFacts& f) {
  const auto facts = f.instance_type.empty() ? std::nullopt : instance_facts(f.instance_type);
  const int type_efa = facts ? facts->efa : 0;
  const bool type_has_efa = type_efa > 0;
  TransportDecision d;
  d.efa_expected = f.nnodes > 1 && (f.efa_devices || type_has_efa);
  if (requested != TransportRule::kAuto) {
    d.resolved = requested;
    return d;
  }
  const std::string nodes = std::to_string(f.nnodes) + " node" + (f.nnodes == 1 ? "" : "s");
  const std::string type = "instance type " + f.instance_type + " (" + f.instance_type_origin + ")";
  d.resolved = d.efa_expected ? TransportRule::kEfa : TransportRule::kAny;
  if (f.nnodes <= 1)
    d.reason = "one node: no inter-node transport";
  else if (f.efa_devices)
    d.reason = nodes + ", EFA devices in /sys/class/infiniband";
  else if (type_has_efa)
    d.reason = nodes + ", " + type + " has " + std::to_string(type_efa) +
               (type_efa == 1 ? " EFA interface" : " EFA interfaces") +
               ", though none is visible yet";
  else if (facts)
    d.reason = nodes + ", " + type + " has no EFA, no EFA devices";
  else if (!f.instance_type.empty())
    d.reason = nodes + ", no EFA devices; " + type + " is not in the instance table";
  else
    d.reason = nodes + ", no EFA devices, instance type unknown (--instance-type)";
  return d;
}

PreflightLevel resolve_preflight_level(PreflightLevel requested, int nnodes, bool efa_present) {
  if (requested != PreflightLevel::kAuto) return requested;
  return nnodes > 1 && efa_present ? PreflightLevel::kFull : PreflightLevel::kBasic;
}

const char* level_word(PreflightLevel level) {
  static constexpr const char* kWords[] = {"auto", "none", "basic", "full"};  // the enum's order
  return kWords[static_cast<int>(level)];
}

const char* transport_word(TransportRule rule) {
  static constexpr const char* kWords[] = {"auto", "efa", "net", "any"};  // the enum's order
  return kWords[static_cast<int>(rule)];
}

std::map<std::string, std::string> transport_worker_env(TransportRule resolved,
                                                        const Environment& env) {
  std::map<std::string, std::string> extra;
  if (resolved == TransportRule::kEfa && !env.has("NCCL_NET")) extra["NCCL_NET"] = kEfaNcclNet;
  return extra;
}

}  // namespace tv
