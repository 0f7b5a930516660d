#include "launcher/workers/descendants.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "common/bounded_read.h"
#include "common/parse_number.h"

namespace tv {

std::vector<pid_t> descendants_of(pid_t root, const std::map<pid_t, pid_t>& parent_of) {
  std::set<pid_t> found;
  for (const auto& [pid, ppid] : parent_of) {
    // Walk up; bounded by the table size so a cycle (pid reuse mid-read) cannot loop forever.
    pid_t p = ppid;
    for (size_t steps = 0; p > 0 && steps < parent_of.size(); ++steps) {
      if (p == root) {
        found.insert(pid);
        break;
      }
      auto it = parent_of.find(p);
      if (it == parent_of.end()) break;
      p = it->second;
    }
  }
  found.erase(root);
  return {found.begin(), found.end()};
}

std::map<pid_t, pid_t> parents_of(const ProcTable& table) {
  std::map<pid_t, pid_t> parents;
  for (const auto& [pid, e] : table) parents.emplace_hint(parents.end(), pid, e.ppid);
  return parents;
}

std::vector<pid_t> leftovers_of(pid_t self, const ProcEntry& self_entry, const ProcTable& table,
                                const NotLeftovers& keep) {
  const auto older = [&](const ProcEntry& e) {
    return keep.run_start > 0 && e.start < keep.run_start;
  };
  std::set<pid_t> leaders = keep.own;  // groups and sessions that are not a worker's
  leaders.insert(self_entry.pgid);
  for (const auto& [pid, e] : table)
    if (older(e)) leaders.insert(pid);
  const auto not_a_workers = [&](pid_t pid, const ProcEntry& e) {
    return keep.own.contains(pid) || older(e) || leaders.contains(e.pgid) ||
           (e.sid != self_entry.sid && leaders.contains(e.sid));
  };
  std::vector<pid_t> out;
  for (pid_t pid : descendants_of(self, parents_of(table))) {
    bool kept = false;
    // Up to trainvisor: below one that is not a worker's is not a worker's either.
    pid_t p = pid;
    for (size_t steps = 0; !kept && p != self && steps <= table.size(); ++steps) {
      const auto it = table.find(p);
      if (it == table.end()) break;
      kept = not_a_workers(p, it->second);
      p = it->second.ppid;
    }
    if (!kept) out.push_back(pid);
  }
  return out;
}

namespace {

// Fields 3 to 6 and 22 of /proc/PID/stat (state, ppid, pgrp, session, starttime); the command
// name (field 2) may contain spaces and ')'.
bool read_stat(pid_t pid, char* state, ProcEntry* entry) {
  const std::string path = pid == 0 ? "/proc/self/stat" : "/proc/" + std::to_string(pid) + "/stat";
  const auto stat = read_regular_file(path, kSmallFileCap);
  if (!stat) return false;
  const auto close = stat->rfind(')');
  if (close == std::string::npos || close + 4 >= stat->size()) return false;
  const char* p = stat->data() + close + 2;  // ") S 1234 ..."
  const char* end = stat->data() + stat->size();
  *state = *p;
  p += 1;
  std::uint64_t fields[20] = {};  // fields 4 .. 22
  for (std::uint64_t& f : fields) {
    while (p < end && *p == ' ') ++p;
    long long v = 0;  // tty_nr and the priorities may be negative
    const auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) return false;
    f = static_cast<std::uint64_t>(v);
    p = next;
  }
  entry->ppid = static_cast<pid_t>(fields[0]);
  entry->pgid = static_cast<pid_t>(fields[1]);
  entry->sid = static_cast<pid_t>(fields[2]);
  entry->start = fields[18];
  return true;
}

// A live process's entry; false when it is gone or already dead (only the reaper's business).
bool read_entry(pid_t pid, ProcEntry* entry) {
  char state = 0;
  return read_stat(pid, &state, entry) && state != 'Z' && state != 'X';
}

// Dead: gone from /proc, or a zombie (it runs no more; Init reaps it).
bool dead(pid_t pid) {
  ProcEntry e;
  return !read_entry(pid, &e);
}

// The pids listed in /proc/PID/task/*/children (each thread's own children; none once it is gone).
std::vector<pid_t> children_of(pid_t pid) {
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  std::vector<pid_t> kids;
  DIR* dir = ::opendir(task.c_str());
  if (!dir) return kids;  // gone meanwhile
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const auto list = read_regular_file(task + "/" + e->d_name + "/children", kSmallFileCap);
    if (!list) continue;
    std::string_view rest = *list;
    while (!rest.empty()) {
      pid_t kid = 0;
      auto [next, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), kid);
      if (ec == std::errc() && kid > 0) kids.push_back(kid);
      rest.remove_prefix(static_cast<size_t>(next - rest.data()));
      if (!rest.empty()) rest.remove_prefix(1);  // the space after each pid
    }
  }
  ::closedir(dir);
  return kids;
}

}  // namespace

std::optional<ProcTable> read_subtree(pid_t root) {
  const std::string self = "/proc/" + std::to_string(root) + "/task/" + std::to_string(root);
  if (::access((self + "/children").c_str(), R_OK) != 0) return std::nullopt;
  ProcTable table;
  std::deque<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t parent = todo.front();
    todo.pop_front();
    for (pid_t kid : children_of(parent)) {
      ProcEntry e;
      // A zombie has no children left; one that reparented meanwhile is seen under its new parent.
      if (!read_entry(kid, &e) || e.ppid != parent || table.contains(kid)) continue;
      table[kid] = e;
      todo.push_back(kid);
    }
  }
  return table;
}

std::optional<ProcEntry> read_self() {
  ProcEntry e;
  if (!read_entry(0, &e)) return std::nullopt;
  return e;
}

bool has_children() {
  siginfo_t info{};
  return ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 || errno != ECHILD;
}

ProcTable read_process_table() {
  ProcTable table;
  DIR* dir = ::opendir("/proc");
  if (!dir) return table;
  while (dirent* e = ::readdir(dir)) {
    const auto pid = parse_integer<pid_t>(e->d_name, 1, std::numeric_limits<pid_t>::max());
    if (!pid) continue;
    ProcEntry entry;
    if (read_entry(*pid, &entry)) table[*pid] = entry;
  }
  ::closedir(dir);
  return table;
}

int kill_descendants(const NotLeftovers& keep, std::chrono::milliseconds limit) {
  if (!has_children()) return 0;
  const auto self = read_self();
  if (!self) return 0;  // no /proc: nothing can be told apart, so nothing is killed
  auto subtree = read_subtree(::getpid());
  const auto table = subtree ? std::move(*subtree) : read_process_table();
  std::vector<pid_t> killed;
  for (pid_t pid : leftovers_of(::getpid(), *self, table, keep))
    if (::kill(pid, SIGKILL) == 0) killed.push_back(pid);
  const int signalled = static_cast<int>(killed.size());
  // SIGKILL is delivered when the process next runs: on a busy machine that takes a while.
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!killed.empty() && std::chrono::steady_clock::now() < deadline) {
    std::erase_if(killed, dead);
    if (!killed.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return signalled;
}

}  // namespace tv
