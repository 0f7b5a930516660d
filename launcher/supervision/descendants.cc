#include "launcher/supervision/descendants.h"

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

namespace {

// Fields 3 and 4 of /proc/PID/stat (state, ppid); the command name (field 2) may contain spaces
// and ')'.
bool read_state(pid_t pid, std::string* state, long* parent) {
  const auto stat = read_regular_file("/proc/" + std::to_string(pid) + "/stat", kSmallFileCap);
  if (!stat) return false;
  const auto close = stat->rfind(')');
  if (close == std::string::npos || close + 4 >= stat->size()) return false;
  const char* first = stat->data() + close + 2;  // ") S 1234 ..."
  *state = std::string(first, 1);
  const char* end = stat->data() + stat->size();
  return std::from_chars(first + 2, end, *parent).ec == std::errc();
}

bool read_ppid(pid_t pid, pid_t* ppid) {
  std::string state;
  long parent = 0;
  if (!read_state(pid, &state, &parent)) return false;
  if (state == "Z" || state == "X") return false;  // already dead: only the reaper's business
  *ppid = static_cast<pid_t>(parent);
  return true;
}

// Dead: gone from /proc, or a zombie (it runs no more; Init reaps it).
bool dead(pid_t pid) {
  std::string state;
  long parent = 0;
  return !read_state(pid, &state, &parent) || state == "Z" || state == "X";
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

std::optional<std::map<pid_t, pid_t>> read_subtree(pid_t root) {
  const std::string self = "/proc/" + std::to_string(root) + "/task/" + std::to_string(root);
  if (::access((self + "/children").c_str(), R_OK) != 0) return std::nullopt;
  std::map<pid_t, pid_t> table;
  std::deque<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t parent = todo.front();
    todo.pop_front();
    for (pid_t kid : children_of(parent)) {
      pid_t ppid = 0;
      // A zombie has no children left; one that reparented meanwhile is seen under its new parent.
      if (!read_ppid(kid, &ppid) || ppid != parent || table.contains(kid)) continue;
      table[kid] = parent;
      todo.push_back(kid);
    }
  }
  return table;
}

bool has_children() {
  siginfo_t info{};
  return ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0 || errno != ECHILD;
}

std::map<pid_t, pid_t> read_process_table() {
  std::map<pid_t, pid_t> table;
  DIR* dir = ::opendir("/proc");
  if (!dir) return table;
  while (dirent* e = ::readdir(dir)) {
    const auto pid = parse_integer<pid_t>(e->d_name, 1, std::numeric_limits<pid_t>::max());
    if (!pid) continue;
    pid_t ppid = 0;
    if (read_ppid(*pid, &ppid)) table[*pid] = ppid;
  }
  ::closedir(dir);
  return table;
}

int kill_descendants(const std::set<pid_t>& spare, std::chrono::milliseconds limit) {
  if (!has_children()) return 0;
  auto subtree = read_subtree(::getpid());
  const auto table = subtree ? std::move(*subtree) : read_process_table();
  std::set<pid_t> keep = spare;
  for (pid_t s : spare)
    for (pid_t d : descendants_of(s, table)) keep.insert(d);
  std::vector<pid_t> killed;
  for (pid_t pid : descendants_of(::getpid(), table))
    if (!keep.contains(pid) && ::kill(pid, SIGKILL) == 0) killed.push_back(pid);
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
