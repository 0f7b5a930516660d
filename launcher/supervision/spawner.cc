#include "launcher/supervision/spawner.h"

#include <boost/asio/post.hpp>

#include "common/init.h"

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

}  // namespace tv
