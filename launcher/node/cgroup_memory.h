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

// The OOM kills of this process's memory cgroup since a generation started: whether a worker's
// SIGKILL was the OOM killer's (the Supervisor's one question about memory). Everything is read
// through `fs`, which must outlive it.
class OomKills {
 public:
  explicit OomKills(const FileSystem& fs);  // the cgroup, from /proc/self/cgroup
  void generation_started();                // the count now is the next kills' baseline
  // "out of memory (cgroup limit 64 MiB)" when a SIGKILL came with a kill counted since the
  // generation started; "" for any other end, or with no memory cgroup to read.
  std::string why(int signal) const;

 private:
  const FileSystem& fs_;
  std::optional<MemoryCgroup> cgroup_;
  std::uint64_t at_start_ = 0;
};

}  // namespace tv
