#include "launcher/supervision/descendants.h"

#include <dirent.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <thread>

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

// Field 4 of /proc/PID/stat (live processes only); the command name (field 2) may contain spaces
// and ')'.
bool read_state(pid_t pid, std::string* state, long* parent) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  auto close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(stat.substr(close + 1));
  return static_cast<bool>(rest >> *state >> *parent);
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

}  // namespace

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
  const auto table = read_process_table();
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
