// Finds and kills every process that descends from trainvisor (workers' children, setsid'd
// grandchildren, daemonized data loaders), so nothing of the job outlives a generation.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <set>
#include <vector>

namespace tv {

// Pure: every pid in `parent_of` whose chain of parents reaches `root` (root excluded).
std::vector<pid_t> descendants_of(pid_t root, const std::map<pid_t, pid_t>& parent_of);

// pid -> ppid for every process in /proc (processes that vanish while reading are skipped).
std::map<pid_t, pid_t> read_process_table();

// SIGKILLs every descendant of this process except `spare` and their own descendants (the warm
// standbys), then waits up to `limit` until each has died (a zombie counts: Init reaps it), so
// nothing killed here still runs when trainvisor moves on or exits. Returns how many were
// signalled.
int kill_descendants(const std::set<pid_t>& spare = {},
                     std::chrono::milliseconds limit = std::chrono::milliseconds(1000));

}  // namespace tv
