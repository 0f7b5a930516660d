// The node fingerprint (docs/coordination.md, "Node fingerprint"): what must be the same on every
// node of a job, sent in each node's join and compared by the coordinator before generation 0,
// so a job whose nodes differ is refused (78 on every node) before any worker starts instead of
// hanging at its first collective.
//
// A fingerprint is a few facts (trainvisor's version, the driver, CUDA, NCCL, aws-ofi-nccl and
// torch versions, the GPU model), each "unknown" when it could not be read, and the job's
// NCCL_* / FI_* / CUDA_* / TORCH_* variables (less those that differ by design:
// `differs_by_design`) with a SHA-256 of them all. Gathering the facts is launcher/plan's
// (launcher/plan/node_fingerprint.h); this module is pure: the variables chosen, the message's
// JSON, and the comparison, which names each difference per node.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/environment.h"

namespace tv::rdzv {

// The fingerprint's own format in a join ({"format": 1, ...}); a join without one comes from a
// trainvisor older than the fingerprint (protocol 2 without it).
inline constexpr int kFingerprintFormat = 1;
inline constexpr std::size_t kMaxFingerprintVars = 256;  // variables sent; the hash covers all
inline constexpr std::size_t kMaxFingerprintValue = 512;

struct Fingerprint {
  int format = kFingerprintFormat;
  // "trainvisor", "driver", "cuda", "nccl", "aws-ofi-nccl", "torch", "gpu": a value, or "unknown".
  std::map<std::string, std::string> facts;
  std::map<std::string, std::string> vars;  // the compared variables (at most kMaxFingerprintVars)
  std::string vars_hash;                    // SHA-256 (hex) over every compared variable
};

// NCCL_*, FI_*, CUDA_*, TORCH_* and not differs_by_design.
bool compared_variable(std::string_view name);
// Variables that may differ between nodes by design: CUDA_VISIBLE_DEVICES, the per-node
// interfaces and devices (NCCL_SOCKET_IFNAME, NCCL_IB_HCA, FI_EFA_IFACE), NCCL_HOSTID, per-node
// file names (NCCL_DEBUG_FILE, NCCL_TOPO_DUMP_FILE, CUDA_MPS_PIPE_DIRECTORY), and any name ending
// in _ADDR, _HOST, _HOSTNAME, _IFNAME, _PORT, _RANK or _NODE_RANK.
bool differs_by_design(std::string_view name);
// `fp.vars` and `fp.vars_hash` from the environment.
void set_compared_variables(Fingerprint& fp, const Environment& env);

nlohmann::json fingerprint_json(const Fingerprint& fp);
// The join's "fingerprint"; nullopt when it has none. Texts through untrusted_text, at most
// kMaxFingerprintVars variables.
std::optional<Fingerprint> fingerprint_from(const nlohmann::json& join_body);

struct NodePrint {
  int rank = 0;
  std::string host;
  std::optional<Fingerprint> print;  // nullopt: the node sent none
};
// "" when every node's fingerprint is the same (or no node sent one); else every difference,
// named per node (a node that sent none, when others did, is one):
// "torch 2.11.0 on nodes 0-2, 2.10.0 on node 3 (host-d)", "NCCL_PROTO=Simple on node 1 (host-b),
// unset on node 0 (host-a)".
std::string fingerprint_mismatch(const std::vector<NodePrint>& nodes);

}  // namespace tv::rdzv
