#include "launcher/plan/node_fingerprint.h"

#include <algorithm>
#include <vector>

#include "common/bounded_read.h"
#include "health/nccl_plugin.h"

namespace tv {
namespace {

constexpr const char* kUnknown = "unknown";
constexpr const char* kProcDriver = "/proc/driver/nvidia";

std::string or_unknown(const std::string& s) { return s.empty() ? kUnknown : s; }

std::string trimmed(std::string s) {
  const auto first = s.find_first_not_of(" \t");
  const auto last = s.find_last_not_of(" \t\r");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

// The value after `key` on its line ("Model:"), trimmed; "" when absent.
std::string field(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return "";
  const auto start = at + key.size();
  return trimmed(text.substr(start, text.find('\n', start) - start));
}

// aws-ofi-nccl's version from the first plugin file that names one; "none" when NCCL finds no
// net plugin file. Read through the plan's file system.
std::string aws_ofi_version(const Environment& env, const FileSystem& fs) {
  const auto found = find_net_plugins(plugin_search_dirs(env), fs);
  for (const auto& f : found)
    if (!f.version.empty()) return f.version;
  return found.empty() ? "none" : kUnknown;
}

}  // namespace

std::string driver_version_in(const std::string& proc_version) {
  // The first word after "Kernel Module" that starts with a digit (the open module's line has
  // "for x86_64" before it).
  const std::string rest = field(proc_version, "Kernel Module");
  for (std::size_t at = 0; at < rest.size();) {
    const auto end = std::min(rest.find_first_of(" \t", at), rest.size());
    if (rest[at] >= '0' && rest[at] <= '9') return rest.substr(at, end - at);
    at = rest.find_first_not_of(" \t", end);
  }
  return "";
}

std::string gpu_models(const FileSystem& fs) {
  std::vector<std::string> models;
  for (const auto& bus : fs.list(std::string(kProcDriver) + "/gpus")) {
    const auto info =
        fs.read(std::string(kProcDriver) + "/gpus/" + bus + "/information", kSmallFileCap);
    const std::string model = info ? field(*info, "Model:") : "";
    if (!model.empty() && std::find(models.begin(), models.end(), model) == models.end())
      models.push_back(model);
  }
  std::string out;
  for (const auto& m : models) {
    if (!out.empty()) out += ", ";
    out += m;
  }
  return out;
}

rdzv::Fingerprint node_fingerprint(const Environment& env, const std::optional<TorchVersion>& torch,
                                   const FileSystem& fs, const std::string& version) {
  rdzv::Fingerprint fp;
  const auto proc = fs.read(std::string(kProcDriver) + "/version", kSmallFileCap);
  fp.facts = {{"trainvisor", or_unknown(version)},
              {"driver", or_unknown(proc ? driver_version_in(*proc) : "")},
              {"cuda", or_unknown(torch ? torch->cuda : "")},
              {"nccl", or_unknown(torch ? torch->nccl : "")},
              {"aws-ofi-nccl", aws_ofi_version(env, fs)},
              {"torch", or_unknown(torch ? torch->text : "")},
              {"gpu", or_unknown(gpu_models(fs))}};
  rdzv::set_compared_variables(fp, env);
  return fp;
}

}  // namespace tv
