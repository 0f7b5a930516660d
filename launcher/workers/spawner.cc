#include "launcher/workers/spawner.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <limits>
#include <vector>

#include "common/init.h"
#include "common/parse_number.h"
#include "launcher/workers/descendants.h"

namespace tv {
namespace {

constexpr int kIoprioWhoProcess = 1;

std::vector<pid_t> threads_of(pid_t pid) {
  std::vector<pid_t> tids;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return tids;
  while (dirent* e = ::readdir(d))
    if (auto tid = parse_integer<pid_t>(e->d_name, 1, std::numeric_limits<pid_t>::max()))
      tids.push_back(*tid);
  ::closedir(d);
  return tids;
}

// `pid` and every process below it: an interpreter wrapper that does not exec (Isaac Sim's
// python.sh runs `$python_exe "$@" || error_exit`) has the standby's Python as its child.
std::vector<pid_t> process_tree(pid_t pid) {
  std::vector<pid_t> out{pid};
  auto subtree = read_subtree(pid);
  const auto table = subtree ? std::move(*subtree) : read_process_table();
  for (pid_t d : descendants_of(pid, parents_of(table))) out.push_back(d);
  return out;
}

}  // namespace

InitSpawner::InitSpawner(boost::asio::io_context& io) : box_(std::make_shared<Mailbox>(&io)) {}

InitSpawner::~InitSpawner() {
  std::lock_guard lock(box_->mu);
  box_->io = nullptr;
}

Result<pid_t> InitSpawner::spawn(const SpawnRequest& req, OnExit on_exit) {
  return Init::instance().spawn(req, [box = box_, fn = std::move(on_exit)](pid_t pid, int status) {
    std::lock_guard lock(box->mu);
    if (box->io) boost::asio::post(*box->io, [fn, pid, status] { fn(pid, status); });
  });
}

void InitSpawner::signal_group(pid_t pid, int sig) {
  if (pid <= 0) return;
  const bool moved = ::getpgid(pid) != pid;  // the child moved itself to another group
  ::kill(-pid, sig);
  if (moved) ::kill(pid, sig);
}

int InitSpawner::signal_process(pid_t pid, int sig) {
  if (pid <= 0) return ESRCH;
  return ::kill(pid, sig) == 0 ? 0 : errno;
}

int InitSpawner::kill_leftovers(const std::set<pid_t>& spare) {
  const Init& init = Init::instance();
  NotLeftovers keep{init.own_children(), init.started_ticks()};
  keep.own.insert(spare.begin(), spare.end());
  return kill_descendants(keep);
}

bool InitSpawner::restore_priority(pid_t pid, std::string* why) {
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, 0);
  const long ioprio = ::syscall(SYS_ioprio_get, kIoprioWhoProcess, 0);
  for (pid_t proc : process_tree(pid))
    for (pid_t tid : threads_of(proc)) {
      // A thread or process that ended meanwhile (ESRCH) needs nothing.
      if (::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), nice) != 0 && errno != ESRCH) {
        *why = std::string("setpriority: ") + std::strerror(errno);
        return false;
      }
      if (ioprio >= 0 && ::syscall(SYS_ioprio_set, kIoprioWhoProcess, tid, ioprio) != 0 &&
          errno != ESRCH) {
        *why = std::string("ioprio_set: ") + std::strerror(errno);
        return false;
      }
    }
  return true;
}

}  // namespace tv
