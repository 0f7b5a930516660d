#include "launcher/rendezvous/fingerprint.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>

#include "common/json_field.h"
#include "launcher/rendezvous/rdzv_protocol.h"

namespace tv::rdzv {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 4> kPrefixes = {"NCCL_", "FI_", "CUDA_", "TORCH_"};
// Per-node by design, or harmless to differ (a per-node file name).
constexpr std::array<std::string_view, 8> kPerNode = {
    "CUDA_VISIBLE_DEVICES", "NCCL_SOCKET_IFNAME",  "NCCL_IB_HCA",     "NCCL_HOSTID",
    "FI_EFA_IFACE",         "NCCL_TOPO_DUMP_FILE", "NCCL_DEBUG_FILE", "CUDA_MPS_PIPE_DIRECTORY"};
constexpr std::array<std::string_view, 7> kPerNodeSuffixes = {
    "_ADDR", "_HOST", "_HOSTNAME", "_IFNAME", "_PORT", "_RANK", "_NODE_RANK"};
// The facts in the order differences are named.
constexpr std::array<std::string_view, 7> kFactOrder = {"trainvisor",   "driver", "cuda", "nccl",
                                                        "aws-ofi-nccl", "torch",  "gpu"};
constexpr std::size_t kMaxDifferences = 8;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::string sha256_hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  return to_hex({digest, len});
}

// "0-2,4" of ranks in order.
std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(ranks[j]);
    }
    i = j + 1;
  }
  return out;
}

// "node 3 (host-d)" for one node, "nodes 0-2" for several.
std::string who(const std::vector<int>& ranks, const std::vector<NodePrint>& nodes) {
  if (ranks.size() > 1) return "nodes " + rank_ranges(ranks);
  std::string s = "node " + std::to_string(ranks[0]);
  for (const auto& n : nodes)
    if (n.rank == ranks[0] && !n.host.empty()) s += " (" + n.host + ")";
  return s;
}

// Each value with the nodes that have it, the most common first: "A on nodes 0-2, B on node 3".
// `value_of` gives a node's value (nullopt: unset); "" when every node has the same.
template <class ValueOf>
std::string difference(const std::vector<NodePrint>& nodes, ValueOf value_of,
                       const std::string& name, bool as_variable) {
  std::vector<std::pair<std::optional<std::string>, std::vector<int>>> groups;
  for (const auto& n : nodes) {
    const std::optional<std::string> v = value_of(*n.print);
    auto g = std::find_if(groups.begin(), groups.end(), [&](auto& p) { return p.first == v; });
    if (g == groups.end())
      groups.push_back({v, {n.rank}});
    else
      g->second.push_back(n.rank);
  }
  if (groups.size() <= 1) return "";
  // The most common value first; of as common ones, a value before "unset" / "unknown".
  std::stable_sort(groups.begin(), groups.end(), [](auto& a, auto& b) {
    if (a.second.size() != b.second.size()) return a.second.size() > b.second.size();
    return a.first.has_value() && !b.first.has_value();
  });
  std::string out;
  for (const auto& [value, ranks] : groups) {
    if (!out.empty()) out += ", ";
    if (!value)
      out += as_variable ? "unset" : "unknown";
    else if (as_variable)
      out += name + "=" + *value;
    else
      out += *value;
    out += " on ";
    out += who(ranks, nodes);
  }
  return as_variable ? out : name + " " + out;
}

// "" when every node sent one, or none did (no node's trainvisor compares: nothing to refuse).
std::string without_print(const std::vector<NodePrint>& nodes) {
  std::vector<int> none;
  for (const auto& n : nodes)
    if (!n.print) none.push_back(n.rank);
  if (none.empty() || none.size() == nodes.size()) return "";
  return who(none, nodes) +
         " sent no fingerprint (a trainvisor older than the node fingerprint: expected the same "
         "trainvisor on every node)";
}

std::vector<std::string> variable_differences(const std::vector<NodePrint>& nodes) {
  const std::string& hash = nodes.front().print->vars_hash;
  if (std::all_of(nodes.begin(), nodes.end(), [&](auto& n) { return n.print->vars_hash == hash; }))
    return {};
  std::vector<std::string> names;
  for (const auto& n : nodes)
    for (const auto& [k, v] : n.print->vars) names.push_back(k);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<std::string> out;
  for (const auto& name : names) {
    auto value_of = [&](const Fingerprint& fp) -> std::optional<std::string> {
      auto it = fp.vars.find(name);
      return it == fp.vars.end() ? std::nullopt : std::optional(it->second);
    };
    if (auto d = difference(nodes, value_of, name, true); !d.empty()) out.push_back(d);
  }
  if (out.empty())  // the same variables as sent, yet another hash: a difference past the cap
    out.push_back("the NCCL_*/FI_*/CUDA_*/TORCH_* variables differ beyond the first " +
                  std::to_string(kMaxFingerprintVars) + " compared");
  return out;
}

}  // namespace

bool differs_by_design(std::string_view name) {
  if (std::find(kPerNode.begin(), kPerNode.end(), name) != kPerNode.end()) return true;
  return std::any_of(kPerNodeSuffixes.begin(), kPerNodeSuffixes.end(),
                     [&](std::string_view s) { return ends_with(name, s); });
}

bool compared_variable(std::string_view name) {
  return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view p) { return starts_with(name, p); }) &&
         !differs_by_design(name);
}

void set_compared_variables(Fingerprint& fp, const Environment& env) {
  std::string all;
  fp.vars.clear();
  for (const auto& [name, value] : env.vars()) {  // a std::map: in name order, as the hash needs
    if (!compared_variable(name)) continue;
    all += name;
    all += '=';
    all += value;
    all += '\0';
    if (fp.vars.size() < kMaxFingerprintVars)
      fp.vars[name.substr(0, 256)] = value.substr(0, kMaxFingerprintValue);
  }
  fp.vars_hash = sha256_hex(all);
}

json fingerprint_json(const Fingerprint& fp) {
  return {
      {"format", fp.format}, {"facts", fp.facts}, {"vars", fp.vars}, {"vars_hash", fp.vars_hash}};
}

std::optional<Fingerprint> fingerprint_from(const json& join_body) {
  auto it = join_body.find("fingerprint");
  if (it == join_body.end() || !it->is_object()) return std::nullopt;
  Fingerprint fp;
  fp.format = json_field(*it, "format", 0);
  fp.vars_hash = peer_text(*it, "vars_hash");
  for (const char* part : {"facts", "vars"}) {
    auto p = it->find(part);
    if (p == it->end() || !p->is_object()) continue;
    auto& into = std::string_view(part) == "facts" ? fp.facts : fp.vars;
    for (const auto& [k, v] : p->items()) {
      if (into.size() >= kMaxFingerprintVars) break;
      into[untrusted_text(k.substr(0, 256))] =
          v.is_string() ? untrusted_text(v.get_ref<const std::string&>()) : "unknown";
    }
  }
  return fp;
}

std::string fingerprint_mismatch(const std::vector<NodePrint>& nodes) {
  if (nodes.size() < 2) return "";
  if (std::string none = without_print(nodes); !none.empty()) return none;
  if (!nodes.front().print) return "";
  std::vector<std::string> diffs;
  auto format_of = [](const Fingerprint& fp) { return std::optional(std::to_string(fp.format)); };
  if (auto d = difference(nodes, format_of, "fingerprint format", false); !d.empty())
    diffs.push_back(d);
  for (std::string_view fact : kFactOrder) {
    auto value_of = [&](const Fingerprint& fp) -> std::optional<std::string> {
      auto v = fp.facts.find(std::string(fact));
      return v == fp.facts.end() ? std::nullopt : std::optional(v->second);
    };
    if (auto d = difference(nodes, value_of, std::string(fact), false); !d.empty())
      diffs.push_back(d);
  }
  for (auto& d : variable_differences(nodes)) diffs.push_back(std::move(d));
  if (diffs.empty()) return "";
  std::string out = "the nodes differ: ";
  for (std::size_t i = 0; i < diffs.size() && i < kMaxDifferences; ++i) {
    if (i > 0) out += "; ";
    out += diffs[i];
  }
  if (diffs.size() > kMaxDifferences)
    out += "; and " + std::to_string(diffs.size() - kMaxDifferences) + " more";
  out +=
      " (expected the same on every node: docs/coordination.md, \"Node fingerprint\"; "
      "--node-fingerprint off on node 0 skips the check)";
  return out;
}

}  // namespace tv::rdzv
