#include "launcher/supervision/spawner.h"

#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <csignal>

#include "common/init.h"
#include "launcher/supervision/descendants.h"

namespace tv {

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

int InitSpawner::kill_leftovers(const std::set<pid_t>& spare) { return kill_descendants(spare); }

}  // namespace tv
