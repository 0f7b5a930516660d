#include "common/off_loop.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <condition_variable>
#include <exception>
#include <thread>

namespace tv {

bool OffLoopCall::pending() const {
  if (!s_) return false;
  std::lock_guard lock(s_->mutex);
  return !s_->dropped && !s_->answered;
}

void OffLoopCall::drop() {
  if (!s_) return;
  std::lock_guard lock(s_->mutex);
  s_->dropped = true;
}

void post_answer(const std::shared_ptr<OffLoopState>& s, boost::asio::io_context& io,
                 std::function<void()> then) {
  // Under the lock: a handle dropped meanwhile (its owner, and perhaps the io_context, going
  // away) waits for the post to be over, or is seen here and nothing is posted.
  std::lock_guard lock(s->mutex);
  if (s->dropped) return;
  boost::asio::post(io, [s, then = std::move(then)] {
    {
      std::lock_guard inner(s->mutex);
      if (s->dropped) return;
      s->answered = true;
    }
    then();
  });
}

namespace {

class ThreadOffLoop final : public OffLoop {
 public:
  OffLoopCall run(boost::asio::io_context& io, Work work) override {
    auto s = std::make_shared<OffLoopState>();
    std::thread([s, &io, work = std::move(work)] {
      std::function<void()> then;
      try {
        then = work();
      } catch (const std::exception& e) {  // the work's own errors are its answer's to report
        spdlog::warn("a call beside the event loop failed: {}", e.what());
        return;
      }
      post_answer(s, io, std::move(then));
    }).detach();
    return OffLoopCall(std::move(s));
  }
};

}  // namespace

bool run_bounded(std::function<void()> work, std::chrono::milliseconds deadline) {
  struct Done {
    std::mutex mutex;
    std::condition_variable cv;
    bool over = false;
  };
  auto done = std::make_shared<Done>();
  std::thread([done, work = std::move(work)] {
    work();
    std::lock_guard lock(done->mutex);
    done->over = true;
    done->cv.notify_all();
  }).detach();
  std::unique_lock lock(done->mutex);
  return done->cv.wait_for(lock, deadline, [&done] { return done->over; });
}

OffLoop& real_off_loop() {
  static ThreadOffLoop loop;
  return loop;
}

}  // namespace tv
