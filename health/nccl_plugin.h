// Finds the NCCL net plugin files NCCL would look for (libnccl-net.so, or libnccl-net-<NAME>.so
// for NCCL_NET_PLUGIN=NAME, and the aws-ofi-nccl names) on LD_LIBRARY_PATH and the usual AWS
// folders, and reads aws-ofi-nccl's version from the file ("Initializing aws-ofi-nccl X").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/file_system.h"
#include "health/preflight.h"

namespace tv {

struct PluginFile {
  std::string path;
  std::string version;  // aws-ofi-nccl's, when found in the file
};

std::vector<std::string> plugin_search_dirs(const Environment& env);
// Each plugin file in `dirs` (in their order, then kNames'), a file reached twice (a link beside
// its target, a folder named twice) listed once: the preflight's check and `version` read these.
std::vector<PluginFile> find_net_plugins(const std::vector<std::string>& dirs);
// The same files read through `fs` (tests give a fake), but a file reached twice is listed each
// time: the seam cannot tell one file by two names. Whether there is any, and the first version
// named, are the same either way: all the node fingerprint reads.
std::vector<PluginFile> find_net_plugins(const std::vector<std::string>& dirs,
                                         const FileSystem& fs);
// Version text after "aws-ofi-nccl " in a plugin's bytes; "" when absent.
std::string aws_ofi_version_in(const std::string& bytes);
// needed: EFA is present or required.
CheckResult nccl_plugin_check(const std::vector<PluginFile>& found, const Environment& env,
                              bool needed, TransportRule required);

}  // namespace tv
