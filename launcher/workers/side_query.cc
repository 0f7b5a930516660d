#include "launcher/workers/side_query.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>

namespace tv {
namespace {
constexpr std::size_t kOutputCap = 1 << 20;
}  // namespace

SideQuery::SideQuery(boost::asio::io_context& io, LoopTime& time, Spawner& spawner,
                     SideQueryRequest req)
    : spawner_(spawner), req_(std::move(req)), pipe_(io), deadline_(io, time) {}

SideQuery::~SideQuery() {
  *alive_ = false;
  stop();
}

void SideQuery::start() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    end_.not_started = "cannot create a pipe";
    over_ = true;
    if (req_.done) req_.done(end_);
    return;
  }
  SpawnRequest r = req_.request;
  r.stdout_fd = fds[1];
  auto pid = spawner_.spawn(r, [this, alive = alive_](pid_t, int status) {
    if (!*alive) return;
    end_.wait_status = status;
    exited_ = true;
    pid_ = -1;
    maybe_done();
  });
  ::close(fds[1]);
  if (!pid) {
    ::close(fds[0]);
    end_.not_started = pid.error().message;
    over_ = true;
    if (req_.done) req_.done(end_);
    return;
  }
  pid_ = *pid;
  pipe_.assign(fds[0]);
  read();
  deadline_.expires_after(req_.deadline);
  deadline_.async_wait([this, alive = alive_](const boost::system::error_code& ec) {
    if (ec || !*alive || pid_ <= 0) return;
    end_.timed_out = true;
    spawner_.signal_group(pid_, SIGKILL);
  });
}

void SideQuery::read() {
  pipe_.async_read_some(boost::asio::buffer(buf_),
                        [this, alive = alive_](const boost::system::error_code& ec, std::size_t n) {
                          if (!*alive) return;
                          if (end_.output.size() < kOutputCap) end_.output.append(buf_.data(), n);
                          if (!ec) return read();
                          boost::system::error_code ignored;
                          pipe_.close(ignored);
                          eof_ = true;
                          maybe_done();
                        });
}

void SideQuery::maybe_done() {
  if (over_ || !exited_ || !eof_) return;
  over_ = true;
  deadline_.cancel();
  if (req_.done) req_.done(end_);
}

void SideQuery::stop() {
  over_ = true;
  deadline_.cancel();
  if (pid_ > 0) spawner_.signal_group(pid_, SIGKILL);
  boost::system::error_code ec;
  pipe_.close(ec);
}

}  // namespace tv
