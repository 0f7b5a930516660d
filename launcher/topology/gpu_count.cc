#include "launcher/topology/gpu_count.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <vector>

#include "common/parse_number.h"

namespace tv {
namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    std::string item = s.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    out.push_back(item);
    start = comma + 1;
  }
  return out;
}

bool is_index(const std::string& s) {
  return !s.empty() && s.size() < 6 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool is_uuid(const std::string& s) { return s.starts_with("GPU-") || s.starts_with("MIG-"); }

// CUDA's rule: entries are used in order up to the first invalid one (bad syntax, an index past
// the devices, a repeat).
int cuda_visible_count(const std::string& value, int devices) {
  if (value.empty()) return 0;
  std::set<std::string> seen;
  int n = 0;
  for (const auto& item : split_commas(value)) {
    const bool index_ok = is_index(item) && parse_integer<int>(item, 0, devices - 1).has_value();
    if (!(index_ok || is_uuid(item)) || !seen.insert(item).second) break;
    ++n;
  }
  return std::min(n, devices);
}

std::string lower(std::string v) {
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return v;
}

// nullopt: no restriction ("all", or unset). "void" is an instruction to the container toolkit
// (inject no device), not to CUDA: an image that sets it (Isaac Sim's base image) still gets the
// devices its runtime mounts (SageMaker, a device plugin that does not override the variable),
// and CUDA uses all of them, so the devices the container really has count.
std::optional<int> nvidia_visible_count(const std::string& value) {
  const std::string v = lower(value);
  if (v == "all" || v == "void") return std::nullopt;
  if (v.empty() || v == "none") return 0;
  return static_cast<int>(split_commas(v).size());
}

std::string plural(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

int count_matching(const std::string& dir, bool want_nvidia_digits) {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!want_nvidia_digits) {
      ++n;
      continue;
    }
    const std::string rest = name.starts_with("nvidia") ? name.substr(6) : "";
    if (is_index(rest)) ++n;
  }
  return n;
}

}  // namespace

GpuVisibility visible_gpus(int devices, const std::string& found_in,
                           const std::optional<std::string>& nvidia_visible,
                           const std::optional<std::string>& cuda_visible) {
  if (devices <= 0) return {0, "no NVIDIA GPU device (" + found_in + ")"};
  int n = devices;
  std::string filters;
  if (nvidia_visible) {
    if (auto limit = nvidia_visible_count(*nvidia_visible)) {
      n = std::min(n, *limit);
      filters += ", NVIDIA_VISIBLE_DEVICES=" + *nvidia_visible;
    } else if (lower(*nvidia_visible) == "void") {
      filters += ", NVIDIA_VISIBLE_DEVICES=void ignored: the container has the devices";
    }
  }
  if (cuda_visible) {
    n = std::min(n, cuda_visible_count(*cuda_visible, devices));
    filters += ", CUDA_VISIBLE_DEVICES=" + *cuda_visible;
  }
  return {n, plural(n, "visible GPU") + " (" + plural(devices, "device") + " in " + found_in +
                 filters + ")"};
}

RealGpuCounter::RealGpuCounter(const Environment& env, const std::string& dev_dir,
                               const std::string& proc_dir) {
  int devices = count_matching(dev_dir, true);
  std::string where = dev_dir + "/nvidia*";
  if (devices == 0) {
    devices = count_matching(proc_dir, false);
    where = devices ? proc_dir : where + ", " + proc_dir;
  }
  v_ = visible_gpus(devices, where, env.get("NVIDIA_VISIBLE_DEVICES"),
                    env.get("CUDA_VISIBLE_DEVICES"));
}

}  // namespace tv
