// Finds and kills every process that descends from trainvisor (workers' children, setsid'd
// grandchildren, daemonized data loaders), so nothing of the job outlives a generation.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace tv {

// Pure: every pid in `parent_of` whose chain of parents reaches `root` (root excluded).
std::vector<pid_t> descendants_of(pid_t root, const std::map<pid_t, pid_t>& parent_of);

// pid -> ppid for every process in /proc (processes that vanish while reading are skipped).
std::map<pid_t, pid_t> read_process_table();

// pid -> ppid for the live descendants of `root` only, found from `root` down through
// /proc/PID/task/TID/children (every thread's children); nullopt when the kernel has no such file
// (CONFIG_PROC_CHILDREN off, gVisor), where read_process_table is the way. Costs a few reads per
// descendant, not one per process on the host: on a shared host (Slurm without containers, or a
// benchmark running every node on one machine) /proc holds everyone's processes.
std::optional<std::map<pid_t, pid_t>> read_subtree(pid_t root);

// Whether this process has any child, live or not yet reaped (a waitid peek with WNOWAIT: it
// reaps nothing, Init stays the only reaper). With none there is no descendant either: an
// orphaned grandchild is reparented to trainvisor (the subreaper, or PID 1) before its parent's
// exit is reaped, so it is a child by the time a worker's end reaches the supervisor.
bool has_children();

// SIGKILLs every descendant of this process except `spare` and their own descendants (the warm
// standbys), then waits up to `limit` until each has died (a zombie counts: Init reaps it), so
// nothing killed here still runs when trainvisor moves on or exits. Returns how many were
// signalled.
int kill_descendants(const std::set<pid_t>& spare = {},
                     std::chrono::milliseconds limit = std::chrono::milliseconds(1000));

}  // namespace tv
