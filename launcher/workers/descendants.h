// Finds and kills what the workers left behind (their children, setsid'd grandchildren,
// daemonized data loaders), so nothing of a generation outlives it, and nothing else: the
// processes trainvisor started for itself (the GPU health watch, the warm standbys, query
// children), the ones it already had when it started (a sidecar the entrypoint started before
// `exec trainvisor`) and what those start are never a worker's leftover.
//
// The kernel does not keep an orphan's first parent: a worker's grandchild that called setsid()
// and lost its parent is, to /proc, a child of trainvisor (the subreaper) in a group and session
// of its own, as a sidecar's orphan would be. So the rule (leftovers_of) is by exclusion of what is
// known not to be a worker's, each mark one a worker's descendant cannot carry by accident:
//   - trainvisor's own children (`NotLeftovers::own`) and every process below one;
//   - a process in trainvisor's own process group (workers lead their own groups: Init::spawn),
//     or in a group or session led by an own child or by a process older than the run;
//   - a process that started before the run (`NotLeftovers::run_start`), and what is below it.
// Every other descendant of trainvisor came from a worker: below a worker's group while it ran, or
// an orphan reparented to trainvisor since. docs/supervision.md, "What the workers left behind".
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace tv {

// One process as /proc/PID/stat has it: parent, process group, session, start time (clock ticks
// since boot, the kernel's `starttime`).
struct ProcEntry {
  pid_t ppid = 0;
  pid_t pgid = 0;
  pid_t sid = 0;
  std::uint64_t start = 0;
};
using ProcTable = std::map<pid_t, ProcEntry>;

// What is not a worker's leftover, whatever its place in the tree.
struct NotLeftovers {
  std::set<pid_t> own;          // children trainvisor started for itself or had before the run
  std::uint64_t run_start = 0;  // clock ticks since boot when the run began (0: no limit)
};

// Pure: every pid in `parent_of` whose chain of parents reaches `root` (root excluded).
std::vector<pid_t> descendants_of(pid_t root, const std::map<pid_t, pid_t>& parent_of);
std::map<pid_t, pid_t> parents_of(const ProcTable& table);

// Pure: the descendants of `self` (whose entry `table` holds, or `self_entry`) that are a
// worker's leftover by the rule above, ascending.
std::vector<pid_t> leftovers_of(pid_t self, const ProcEntry& self_entry, const ProcTable& table,
                                const NotLeftovers& keep);

// Every process in /proc (processes that vanish while reading are skipped).
ProcTable read_process_table();

// The live descendants of `root` only, found from `root` down through /proc/PID/task/TID/children
// (every thread's children); nullopt when the kernel has no such file (CONFIG_PROC_CHILDREN off,
// gVisor), where read_process_table is the way. Costs a few reads per descendant, not one per
// process on the host: on a shared host (Slurm without containers, or a benchmark running every
// node on one machine) /proc holds everyone's processes.
std::optional<ProcTable> read_subtree(pid_t root);

// This process's own entry (for its group and session).
std::optional<ProcEntry> read_self();

// Whether this process has any child, live or not yet reaped (a waitid peek with WNOWAIT: it
// reaps nothing, Init stays the only reaper). With none there is no descendant either: an
// orphaned grandchild is reparented to trainvisor (the subreaper, or PID 1) before its parent's
// exit is reaped, so it is a child by the time a worker's end reaches the supervisor.
bool has_children();

// SIGKILLs leftovers_of(this process), then waits up to `limit` until each has died (a zombie
// counts: Init reaps it), so nothing killed here still runs when trainvisor moves on or exits.
// Returns how many were signalled.
int kill_descendants(const NotLeftovers& keep = {},
                     std::chrono::milliseconds limit = std::chrono::milliseconds(1000));

}  // namespace tv
