#include "health/nccl_log.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <regex>

#include "common/parse_number.h"

namespace tv {
namespace {

// Each line is matched by cheap substring tests first; regexes only run on candidate lines.
struct Patterns {
  std::regex version{R"(NCCL version (\S+))"};
  std::regex channel_net{R"( via NET/(.+?)/(\d+)(\(\d+\))?(/GDRDMA)?)"};
  std::regex loaded_plugin{R"(NET/Plugin: Loaded net plugin (.+?) \(v(\d+)\))"};
  std::regex network{R"(Using network (.+?)\s*$)"};
  std::regex ofi_version{R"(NET/OFI (?:Initializing|Using) aws-ofi-nccl ?(\S+))"};
  std::regex fabric_version{R"(NET/OFI Using Libfabric version (\S+))"};
  std::regex provider_new{
      R"(Selected provider is ([^,\s]+), fabric is (\S+) \(found (\d+) nics\))"};
  std::regex provider_old{R"(Selected Provider is (\S+?)(?: \(found (\d+) nics\))?\s*$)"};
  std::regex nnodes{R"(nRanks (\d+) nNodes (\d+))"};
  std::regex warn{R"(NCCL WARN (.*?)\s*$)"};
  std::regex not_found{R"(NET/Plugin ?: Could not find: (.+?)\s*$)"};
};

const Patterns& patterns() {
  static const Patterns p;
  return p;
}

// A count NCCL printed (a plugin API version, NICs, ranks, nodes); an overlong number is absent.
std::optional<int> count(const std::ssub_match& digits) {
  return parse_integer<int>(digits.str(), 0, std::numeric_limits<int>::max());
}

bool has(std::string_view line, std::string_view what) {
  return line.find(what) != std::string_view::npos;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

void add_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

struct NetUse {
  int channels = 0;
  int gdr_channels = 0;
  std::string name;
};

struct State {
  NcclLogSummary s;
  NetUse net;
  int p2p = 0;
  int shm = 0;
  bool init_error = false;
};

void read_channel(State& st, const std::string& line) {
  const auto via = line.find(" via ");
  if (via == std::string::npos) return;
  const std::string rest = line.substr(via + 5);
  if (rest.rfind("P2P/", 0) == 0 || rest.rfind("SHM/", 0) == 0) {
    const auto end = rest.find_first_of(" \t\r", 0);
    std::string kind = rest.substr(0, end);
    if (auto slash = kind.find('/', 4); slash != std::string::npos) kind = kind.substr(0, slash);
    st.s.channel_kinds[kind]++;
    (rest[0] == 'P' ? st.p2p : st.shm)++;
    return;
  }
  std::smatch m;
  if (!std::regex_search(line, m, patterns().channel_net)) return;
  st.net.name = m[1];
  st.net.channels++;
  if (m[4].matched) st.net.gdr_channels++;
  st.s.channel_kinds["NET/" + st.net.name]++;
}

void read_plugin_lines(State& st, const std::string& line) {
  const auto& p = patterns();
  std::smatch m;
  if (has(line, "Loaded net plugin") && std::regex_search(line, m, p.loaded_plugin)) {
    st.s.plugin_name = m[1];
    st.s.plugin_api = count(m[2]);
  } else if (has(line, "aws-ofi-nccl") && std::regex_search(line, m, p.ofi_version)) {
    st.s.plugin_version = m[1];
  } else if (has(line, "Using Libfabric version") && std::regex_search(line, m, p.fabric_version)) {
    st.s.libfabric_version = m[1];
  } else if (has(line, "Selected provider is") && std::regex_search(line, m, p.provider_new)) {
    st.s.provider = m[1];
    st.s.fabric = m[2];
    st.s.nic_count = count(m[3]);
  } else if (has(line, "Selected Provider is") && std::regex_search(line, m, p.provider_old)) {
    st.s.provider = m[1];
    if (m[2].matched) st.s.nic_count = count(m[2]);
  } else if (has(line, "Could not find:") && std::regex_search(line, m, p.not_found)) {
    add_unique(st.s.missing_plugins, m[1]);
  }
}

void read_line(State& st, const std::string& line) {
  const auto& p = patterns();
  std::smatch m;
  if (has(line, "Channel ") && has(line, " via ")) return read_channel(st, line);
  if (has(line, "NET/")) read_plugin_lines(st, line);
  if (!st.s.nccl_version && has(line, "NCCL version ") && std::regex_search(line, m, p.version))
    st.s.nccl_version = m[1];
  else if (has(line, "Using network ") && std::regex_search(line, m, p.network))
    st.s.network = m[1];
  else if (has(line, " nNodes ") && std::regex_search(line, m, p.nnodes)) {
    st.s.nranks = count(m[1]);
    st.s.nnodes = count(m[2]);
  } else if (has(line, "Init COMPLETE")) {
    st.s.init_complete = true;
  } else if (has(line, "NCCL WARN") && std::regex_search(line, m, p.warn)) {
    add_unique(st.s.warnings, m[1]);
  }
  if (has(line, "NCCL INFO init.cc:") && has(line, " -> ")) st.init_error = true;
}

bool is_libfabric_name(const std::string& name) {
  const std::string n = lower(name);
  return n.find("libfabric") != std::string::npos || n == "ofi";
}

std::string net_transport(const State& st) {
  const std::string n = lower(st.net.name);
  if (n == "socket") return "socket";
  if (is_libfabric_name(st.net.name)) {
    if (!st.s.provider || lower(*st.s.provider).rfind("efa", 0) != 0) return "ofi";
    return st.net.gdr_channels > 0 ? "efa-gdr" : "efa";
  }
  if (n.rfind("ib", 0) == 0) return "ib";  // IB, IBext, IBext_v8 (SHARP plugin)
  return "unknown";
}

bool init_failed(const State& st) {
  if (st.init_error) return true;
  for (const auto& w : st.s.warnings)
    if (w.find("Failed to initialize any NET plugin") != std::string::npos) return true;
  return false;
}

void decide_transport(State& st) {
  if (st.net.channels > 0) {
    st.s.transport = net_transport(st);
    st.s.gdr = st.net.gdr_channels > 0;
  } else if (init_failed(st) && !st.s.init_complete) {
    st.s.transport = "failed";
  } else if (st.p2p > 0) {
    st.s.transport = "p2p";
  } else if (st.shm > 0) {
    st.s.transport = "shm";
  } else if (init_failed(st)) {
    st.s.transport = "failed";
  }
}

bool any_warning_has(const NcclLogSummary& s, std::string_view what) {
  return std::any_of(s.warnings.begin(), s.warnings.end(),
                     [&](const std::string& w) { return w.find(what) != std::string::npos; });
}

void explain(NcclLogSummary& s, std::string_view text) {
  const bool plugin_loaded = s.plugin_name.has_value();
  if (!plugin_loaded && !s.missing_plugins.empty())
    s.findings.push_back(
        "no NCCL net plugin was loaded (NCCL looked for: " + s.missing_plugins.front() +
        "): the aws-ofi-nccl plugin is not on the library path. Add its lib folder (AWS images: "
        "/opt/amazon/ofi-nccl/lib) to LD_LIBRARY_PATH; plugins >= 1.8 install libnccl-net-ofi.so, "
        "which "
        "NCCL >= 2.19 finds with NCCL_NET_PLUGIN=ofi, older NCCL only through a libnccl-net.so "
        "link to it");
  if (text.find("NCCL_NET_PLUGIN set by environment to none") != std::string_view::npos)
    s.findings.push_back("NCCL_NET_PLUGIN=none disables the aws-ofi-nccl plugin: unset it");
  if (any_warning_has(s, "Failed to initialize any NET plugin"))
    s.findings.push_back(
        "NCCL_NET names a network that no plugin provides, so NCCL refused to initialize instead "
        "of "
        "falling back to TCP (that is what NCCL_NET is for): make the named plugin loadable");
  if (text.find("requires at least libfabric version") != std::string_view::npos)
    s.findings.push_back(
        "the libfabric on the library path is older than the plugin needs (aws-ofi-nccl 1.18 needs "
        "libfabric >= 1.22): put the EFA installer's /opt/amazon/efa/lib first in LD_LIBRARY_PATH");
  if (text.find("libcudart") != std::string_view::npos && !plugin_loaded)
    s.findings.push_back(
        "the net plugin could not load a libcudart it links against: install the CUDA runtime the "
        "plugin was built for, or use a plugin built for this CUDA");
  if (text.find("No eligible providers") != std::string_view::npos ||
      text.find("No data available") != std::string_view::npos)
    s.findings.push_back(
        "libfabric found no efa provider (FI_ENODATA): the EFA devices are not visible in the "
        "container (pass /dev/infiniband/uverbs*, e.g. the vpc.amazonaws.com/efa resource) or the "
        "libfabric loaded is not the EFA installer's");
  if (s.network && lower(*s.network) == "socket" && s.nnodes.value_or(1) > 1)
    s.findings.push_back("NCCL fell back to TCP sockets (NET/Socket) between nodes");
  if (text.find("disabling GDR") != std::string_view::npos)
    s.findings.push_back(
        "the plugin disabled GPUDirect RDMA (traffic is staged through host memory)");
}

}  // namespace

NcclLogSummary classify_nccl_log(std::string_view text) {
  State st;
  size_t pos = 0;
  std::string line;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    line.assign(text.substr(pos, end - pos));
    if (line.find("NCCL") != std::string::npos || line.find("NET/") != std::string::npos)
      read_line(st, line);
    pos = end + 1;
  }
  decide_transport(st);
  explain(st.s, text);
  return st.s;
}

nlohmann::json summary_to_json(const NcclLogSummary& s) {
  auto opt = [](const auto& o) -> nlohmann::json {
    return o ? nlohmann::json(*o) : nlohmann::json();
  };
  return {{"transport", s.transport},
          {"nccl_version", opt(s.nccl_version)},
          {"network", opt(s.network)},
          {"plugin_name", opt(s.plugin_name)},
          {"plugin_api", opt(s.plugin_api)},
          {"plugin_version", opt(s.plugin_version)},
          {"libfabric_version", opt(s.libfabric_version)},
          {"provider", opt(s.provider)},
          {"fabric", opt(s.fabric)},
          {"nic_count", opt(s.nic_count)},
          {"gdr", opt(s.gdr)},
          {"nranks", opt(s.nranks)},
          {"nnodes", opt(s.nnodes)},
          {"init_complete", s.init_complete},
          {"channels", s.channel_kinds},
          {"warnings", s.warnings},
          {"missing_plugins", s.missing_plugins},
          {"findings", s.findings}};
}

}  // namespace tv
