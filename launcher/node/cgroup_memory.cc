#include "launcher/node/cgroup_memory.h"

#include <csignal>
#include <cstdint>
#include <sstream>

#include "common/bounded_read.h"
#include "common/parse_number.h"

namespace tv {
namespace {

std::optional<std::uint64_t> number(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return parse_integer<std::uint64_t>(t, 0, UINT64_MAX);
}

}  // namespace

std::optional<MemoryCgroup> find_memory_cgroup(const FileSystem& fs, const std::string& self_cgroup,
                                               const std::string& root) {
  std::istringstream in(self_cgroup);
  std::string line, v2_path;
  while (std::getline(in, line)) {
    const auto a = line.find(':');
    const auto b = line.find(':', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (controllers.empty() && line.substr(0, a) == "0") v2_path = path;
    std::istringstream names(controllers);
    for (std::string c; std::getline(names, c, ',');)
      if (c == "memory") {  // cgroup v1
        const std::string dir = root + "/memory" + (path == "/" ? "" : path);
        if (fs.exists(dir + "/memory.oom_control"))
          return MemoryCgroup{dir + "/memory.oom_control", dir + "/memory.limit_in_bytes"};
      }
  }
  const std::string dir = root + (v2_path == "/" ? "" : v2_path);
  if (!v2_path.empty() && fs.exists(dir + "/memory.events"))
    return MemoryCgroup{dir + "/memory.events", dir + "/memory.max"};
  return std::nullopt;
}

std::optional<std::uint64_t> oom_kill_count(const FileSystem& fs, const MemoryCgroup& cg) {
  const auto text = fs.read(cg.events_file, kSmallFileCap);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string key, value;
  while (in >> key >> value)
    if (key == "oom_kill") return number(value);
  return std::nullopt;
}

std::optional<std::uint64_t> memory_limit(const FileSystem& fs, const MemoryCgroup& cg) {
  const auto text = fs.read(cg.limit_file, kSmallFileCap);
  if (!text) return std::nullopt;
  const auto n = number(*text);  // "max" is not a number
  if (!n || *n >= (std::uint64_t{1} << 62)) return std::nullopt;
  return n;
}

std::string out_of_memory_text(std::optional<std::uint64_t> limit_bytes) {
  if (!limit_bytes) return "out of memory (cgroup OOM killer)";
  return "out of memory (cgroup limit " + std::to_string(*limit_bytes >> 20) + " MiB)";
}

OomKills::OomKills(const FileSystem& fs) : fs_(fs) {
  if (auto self = fs_.read("/proc/self/cgroup", kSmallFileCap, nullptr))
    cgroup_ = find_memory_cgroup(fs_, *self);
}

void OomKills::generation_started() {
  if (cgroup_) at_start_ = oom_kill_count(fs_, *cgroup_).value_or(0);
}

std::string OomKills::why(int signal) const {
  if (signal != SIGKILL || !cgroup_) return "";
  const auto kills = oom_kill_count(fs_, *cgroup_);
  if (!kills || *kills <= at_start_) return "";
  return out_of_memory_text(memory_limit(fs_, *cgroup_));
}

}  // namespace tv
