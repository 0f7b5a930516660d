#include "launcher/node/resume_wait.h"

#include <spdlog/spdlog.h>

#include "common/escape.h"

namespace tv {

ResumeWait::ResumeWait(boost::asio::io_context& io, LoopTime& time, OffLoop& off_loop,
                       std::string dir)
    : io_(io), off_loop_(off_loop), dir_(std::move(dir)), timer_(io, time) {}

void ResumeWait::start(std::string what, OffLoop::Work work) {
  drop();
  what_ = std::move(what);
  began_ = timer_.time().now();
  call_ = off_loop_.run(io_, [work = std::move(work), this]() -> std::function<void()> {
    // Off the loop: only `work`, which owns what it reads. `this` is used by the answer alone,
    // which runs on the loop only while call_ (a member) has not dropped it.
    auto then = work();
    return [this, then = std::move(then)] {
      timer_.cancel();
      then();
    };
  });
  arm(kResumeLookupDeadline);
}

void ResumeWait::drop() {
  call_.drop();
  timer_.cancel();
}

void ResumeWait::arm(LoopClock::duration after) {
  timer_.expires_after(after);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !call_.pending()) return;
    const double took = std::chrono::duration<double>(timer_.time().now() - began_).count();
    spdlog::warn(
        "checkpoint: the resume lookup under {} has taken {:.0f} s, past its deadline of {} s "
        "(a slow or hung file system?); {} waits for it (a stop still ends the run)",
        escape_control(dir_), took, kResumeLookupDeadline.count(), what_);
    arm(kResumeLookupRepeat);
  });
}

}  // namespace tv
