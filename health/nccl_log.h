// Reads an NCCL log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS including INIT,NET) and says which
// transport NCCL used, from NCCL's own lines. Pure functions, no I/O; thread-safe.
//
// Lines understood (NCCL 2.18 to 2.28, aws-ofi-nccl 1.5 to 1.18; any line prefix such as
// "host:pid:tid [r] " or Slurm's "0: " is skipped):
//   NCCL version 2.28.9+cuda13.0
//   Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM           (also P2P/IPC, P2P/direct pointer)
//   Channel 00 : 0[0] -> 1[1] via SHM/direct/direct
//   Channel 00/0 : 1[1] -> 0[0] [receive] via NET/Socket/0
//   Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA   (plugin < 1.12)
//   Channel 00/0 : 0[0] -> 8[0] [send] via NET/Libfabric/0(1)/GDRDMA(PCI)/Shared
//   NET/Plugin: Loaded net plugin Libfabric (v9)      Using network AWS Libfabric
//   NET/OFI Initializing aws-ofi-nccl 1.13.2-aws      (1.5/1.6: "NET/OFI Using aws-ofi-nccl 1.6.0")
//   NET/OFI Using Libfabric version 1.22
//   NET/OFI Selected Provider is efa (found 4 nics)                       (before 1.14)
//   NET/OFI Selected provider is efa, fabric is efa-direct (found 16 nics) (1.14 and later)
//   comm 0x.. rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
//   ... Init COMPLETE          NCCL WARN ...
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

struct NcclLogSummary {
  // p2p shm socket ib ofi efa efa-gdr failed, or "unknown" when the log shows no channel and no
  // failure (NCCL_DEBUG not at INFO, or a single rank). The network between nodes when NCCL used
  // one, else the fastest intra-node path.
  std::string transport = "unknown";
  std::optional<std::string> nccl_version;       // "2.28.9+cuda13.0"
  std::optional<std::string> network;            // "Using network X": Socket, IB, AWS Libfabric...
  std::optional<std::string> plugin_name;        // "NET/Plugin: Loaded net plugin X (vN)"
  std::optional<int> plugin_api;                 // N
  std::optional<std::string> plugin_version;     // aws-ofi-nccl's, e.g. "1.13.2-aws"
  std::optional<std::string> libfabric_version;  // as the plugin printed it, e.g. "1.22"
  std::optional<std::string> provider;           // libfabric provider, e.g. "efa"
  std::optional<std::string> fabric;             // 1.14+: "efa-direct"
  std::optional<int> nic_count;
  std::optional<bool> gdr;  // NET channels with /GDRDMA (nullopt: no NET)
  std::optional<int> nranks;
  std::optional<int> nnodes;
  bool init_complete = false;
  std::map<std::string, int> channel_kinds;  // "P2P/CUMEM" -> count, "NET/Socket" -> count
  std::vector<std::string> warnings;         // NCCL WARN texts, without duplicates
  std::vector<std::string> missing_plugins;  // "Could not find: X" names of NET plugins
  std::vector<std::string> findings;         // known failures, in words a user can act on
};

NcclLogSummary classify_nccl_log(std::string_view text);
nlohmann::json summary_to_json(const NcclLogSummary& s);

}  // namespace tv
