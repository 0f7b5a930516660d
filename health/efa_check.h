// EFA: the devices in sysfs (/sys/class/infiniband/* with driver efa, PCI vendor 0x1d0f), their
// /dev/infiniband/uverbs* nodes in this container, and libfabric's provider through fi_getinfo,
// asked of the libfabric the NCCL plugin will load (dlopen'd at run time: the library search path
// first, then the EFA installer's /opt/amazon/efa/lib). The reference to match is `fi_info -p efa`.
#pragma once

#include <string>
#include <vector>

#include "common/file_system.h"
#include "health/dynamic_library.h"
#include "health/preflight.h"

namespace tv {

struct RdmaDevice {
  std::string name;                        // efa_0, rdmap16s27, mlx5_0
  std::string driver;                      // efa, mlx5_core...
  std::string vendor;                      // 0x1d0f for Amazon
  std::vector<std::string> uverbs;         // uverbs0
  std::vector<std::string> missing_nodes;  // /dev/infiniband/uverbs0 when absent
  bool is_efa() const { return driver == "efa" || vendor == "0x1d0f"; }
};

struct RdmaInventory {
  std::vector<RdmaDevice> efa;
  std::vector<RdmaDevice> other;  // mlx5 and other non-EFA RDMA devices
};

RdmaInventory find_rdma_devices(const FileSystem& fs);
// required: the resolved --require-transport (any|net|efa).
CheckResult efa_devices_check(const RdmaInventory& inv, TransportRule required);

struct LibfabricInfo {
  bool loaded = false;
  std::string path;              // the libfabric.so.1 that was loaded
  std::string version;           // fi_version(): "1.22"
  std::string installer_path;    // /opt/amazon/efa/lib/libfabric.so.1 when it exists
  std::string provider;          // asked for, e.g. "efa"
  int rc = 0;                    // fi_getinfo's return (-61 = -FI_ENODATA)
  std::string error;             // fi_strerror(-rc) or the dlopen error
  bool hmem = false;             // the provider answered with FI_HMEM (GPU memory)
  std::string provider_name;     // as answered ("efa", "tcp;ofi_rxm")
  std::string provider_version;  // "122.0"
  std::string fabric;
  std::vector<std::string> domains;  // rdmap16s27-rdm, ...
};

LibfabricInfo query_libfabric(const LibraryLoader& loader, const FileSystem& fs,
                              const std::string& provider);
// efa_present: EFA devices in sysfs; required: resolved --require-transport.
CheckResult libfabric_check(const LibfabricInfo& info, bool efa_present, TransportRule required);

}  // namespace tv
