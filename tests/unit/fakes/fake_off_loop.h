// FakeOffLoop: an OffLoop (common/off_loop.h) whose calls wait until the test releases them, as a
// file system that blocks until it is let go: the work runs on the test's thread in release(),
// and its answer is posted to the loop as the real one's is (post_answer), so a test sees what
// the loop does while a call is under way (heartbeats, signals, a stop) and after it. Made with
// `hold` false, its work runs at once instead (a file system that never blocks), for the tests
// that are not about a slow one; the answer is still posted.
#pragma once

#include <deque>
#include <memory>
#include <utility>

#include "common/off_loop.h"

namespace tv::testing {

class FakeOffLoop final : public OffLoop {
 public:
  explicit FakeOffLoop(bool hold = true) : hold_(hold) {}
  OffLoopCall run(boost::asio::io_context& io, Work work) override {
    auto s = std::make_shared<OffLoopState>();
    if (!hold_) {
      post_answer(s, io, work());
      return OffLoopCall(std::move(s));
    }
    waiting_.push_back({s, &io, std::move(work)});
    ++started_;
    return OffLoopCall(std::move(s));
  }
  // Calls started and not yet released (a dropped one included: its work still "hangs").
  std::size_t waiting() const { return waiting_.size(); }
  std::size_t started() const { return started_; }
  // Runs the oldest call's work now and posts its answer; false when none waits.
  bool release() {
    if (waiting_.empty()) return false;
    Call c = std::move(waiting_.front());
    waiting_.pop_front();
    post_answer(c.state, *c.io, c.work());
    return true;
  }

 private:
  struct Call {
    std::shared_ptr<OffLoopState> state;
    boost::asio::io_context* io;
    Work work;
  };
  bool hold_;
  std::deque<Call> waiting_;
  std::size_t started_ = 0;
};

}  // namespace tv::testing
