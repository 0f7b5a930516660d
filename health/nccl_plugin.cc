#include "health/nccl_plugin.h"

#include <filesystem>
#include <sstream>

#include "common/bounded_read.h"

namespace tv {
namespace {

const char* const kNames[] = {"libnccl-net.so", "libnccl-net-ofi.so", "libnccl-net-aws-ofi.so"};

}  // namespace

std::vector<std::string> plugin_search_dirs(const Environment& env) {
  std::vector<std::string> dirs;
  std::stringstream ld(env.get("LD_LIBRARY_PATH").value_or(""));
  for (std::string d; std::getline(ld, d, ':');)
    if (!d.empty()) dirs.push_back(d);
  for (const char* d :
       {"/opt/amazon/ofi-nccl/lib", "/opt/amazon/ofi-nccl/lib64", "/opt/aws-ofi-nccl/lib",
        "/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"})
    dirs.push_back(d);
  return dirs;
}

std::string aws_ofi_version_in(const std::string& bytes) {
  for (const std::string key : {"Initializing aws-ofi-nccl ", "Using aws-ofi-nccl "}) {
    auto pos = bytes.find(key);
    if (pos == std::string::npos) continue;
    pos += key.size();
    size_t end = pos;
    while (end < bytes.size() && (std::isalnum(static_cast<unsigned char>(bytes[end])) ||
                                  bytes[end] == '.' || bytes[end] == '-'))
      ++end;
    if (end > pos) return bytes.substr(pos, end - pos);
  }
  return "";
}

std::vector<PluginFile> find_net_plugins(const std::vector<std::string>& dirs,
                                         const FileSystem& fs) {
  std::vector<PluginFile> found;
  for (const auto& dir : dirs)
    for (const char* name : kNames) {
      const std::string path = dir + "/" + name;
      if (!fs.exists(path)) continue;
      const auto bytes = fs.read(path, kLogFileCap);
      found.push_back({path, aws_ofi_version_in(bytes.value_or(""))});
    }
  return found;
}

// The real files, each once: a later name of a file already found (std::filesystem::equivalent:
// the same device and inode) is dropped.
std::vector<PluginFile> find_net_plugins(const std::vector<std::string>& dirs) {
  std::vector<PluginFile> found;
  std::error_code ec;
  for (auto& file : find_net_plugins(dirs, RealFileSystem())) {
    bool dup = false;
    for (const auto& f : found) dup |= std::filesystem::equivalent(f.path, file.path, ec);
    if (!dup) found.push_back(std::move(file));
  }
  return found;
}

CheckResult nccl_plugin_check(const std::vector<PluginFile>& found, const Environment& env,
                              bool needed, TransportRule required) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : found) files.push_back({{"path", f.path}, {"version", f.version}});
  CheckResult r{"nccl-net-plugin",
                Outcome::kPass,
                "",
                {{"files", files}, {"NCCL_NET_PLUGIN", env.get("NCCL_NET_PLUGIN").value_or("")}}};
  const Outcome bad =
      required == TransportRule::kEfa ? Outcome::kFail : (needed ? Outcome::kWarn : Outcome::kSkip);
  if (env.get("NCCL_NET_PLUGIN").value_or("") == "none") {
    r.outcome = needed || required == TransportRule::kEfa ? bad : Outcome::kSkip;
    r.message =
        "NCCL_NET_PLUGIN=none disables the aws-ofi-nccl plugin: NCCL will use TCP between nodes";
    return r;
  }
  if (found.empty()) {
    r.outcome = bad;
    r.message =
        "no NCCL net plugin (libnccl-net.so, libnccl-net-ofi.so) on LD_LIBRARY_PATH or in "
        "/opt/amazon/ofi-nccl/lib: without aws-ofi-nccl NCCL uses TCP between nodes";
    return r;
  }
  r.message =
      "NCCL net plugin: " + found.front().path +
      (found.front().version.empty() ? "" : " (aws-ofi-nccl " + found.front().version + ")");
  bool has_default = false;
  for (const auto& f : found) has_default |= f.path.ends_with("/libnccl-net.so");
  if (!has_default && !env.has("NCCL_NET_PLUGIN")) {
    r.outcome = needed ? Outcome::kWarn : Outcome::kPass;
    r.message +=
        "; NCCL before 2.19 looks only for libnccl-net.so: set NCCL_NET_PLUGIN=ofi or add a "
        "libnccl-net.so link";
  }
  return r;
}

}  // namespace tv
