// Finds and kills every process that descends from trainvisor (workers' children, setsid'd
// grandchildren, daemonized data loaders), so nothing of the job outlives a generation.
#pragma once

#include <sys/types.h>

#include <map>
#include <vector>

namespace tv {

// Pure: every pid in `parent_of` whose chain of parents reaches `root` (root excluded).
std::vector<pid_t> descendants_of(pid_t root, const std::map<pid_t, pid_t>& parent_of);

// pid -> ppid for every process in /proc (processes that vanish while reading are skipped).
std::map<pid_t, pid_t> read_process_table();

// SIGKILLs every descendant of this process; returns how many were signalled. Init reaps them.
int kill_descendants();

}  // namespace tv
