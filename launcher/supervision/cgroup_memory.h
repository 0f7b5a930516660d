// Why a worker died of SIGKILL: the kernel's OOM killer, when the memory cgroup trainvisor and its
// workers run in (a container's, a Kubernetes pod's, a Batch job's) counted one more OOM kill
// since the generation started. cgroup v2: `oom_kill` in memory.events, the limit in memory.max;
// cgroup v1: `oom_kill` in memory.oom_control, the limit in memory.limit_in_bytes. Read through
// the FileSystem seam; nothing when the files are not there (no memory controller).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/file_system.h"

namespace tv {

struct MemoryCgroup {
  std::string events_file;  // the file with "oom_kill N"
  std::string limit_file;   // memory.max or memory.limit_in_bytes
};

// The memory cgroup of this process, from /proc/self/cgroup (`self_cgroup`: its text) under
// `root` (/sys/fs/cgroup); nullopt when there is none to read.
std::optional<MemoryCgroup> find_memory_cgroup(const FileSystem& fs, const std::string& self_cgroup,
                                               const std::string& root = "/sys/fs/cgroup");
std::optional<std::uint64_t> oom_kill_count(const FileSystem& fs, const MemoryCgroup& cg);
// The limit in bytes; nullopt for none ("max", or v1's "unlimited" 2^63 - page).
std::optional<std::uint64_t> memory_limit(const FileSystem& fs, const MemoryCgroup& cg);
// "out of memory (cgroup limit 64 MiB)", or "out of memory (cgroup OOM killer)" without a limit.
std::string out_of_memory_text(std::optional<std::uint64_t> limit_bytes);

}  // namespace tv
