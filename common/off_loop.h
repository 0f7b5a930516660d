// OffLoop: where a call that may block on a file system runs, so that the event loop (heartbeats,
// signals, the coordinator) never waits behind it: a resume lookup over a checkpoint directory on
// Lustre, EFS or NFS takes seconds under load, and forever when an NFS server is gone
// (docs/architecture.md, "No file-system call on the loop"). `run` starts the work beside the loop
// and posts what it returns (the part that acts on the answer) to the loop. The call's handle
// drops the answer when it is dropped or destroyed: the work, which may be inside a call that never
// returns, is then abandoned (a thread cannot be cancelled; it ends with the process), and nothing
// of the loop's is touched by it afterwards. The work must therefore hold only what it owns
// (copies), never references to the loop's objects; its answer may.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

namespace tv {

// Shared by a call's handle and its work: whether the answer is still wanted.
struct OffLoopState {
  std::mutex mutex;
  bool dropped = false;
  bool answered = false;  // the answer ran on the loop
};

// One call in progress (or over). Move-only; destroying it drops the answer.
class OffLoopCall {
 public:
  OffLoopCall() = default;
  explicit OffLoopCall(std::shared_ptr<OffLoopState> s) : s_(std::move(s)) {}
  OffLoopCall(OffLoopCall&&) = default;
  OffLoopCall& operator=(OffLoopCall&& o) noexcept {
    if (this != &o) {
      drop();
      s_ = std::move(o.s_);
    }
    return *this;
  }
  ~OffLoopCall() { drop(); }
  // Started, not dropped, and its answer not yet run.
  bool pending() const;
  // From now on its answer never runs (on the loop's thread: at once; from another: once a post
  // already under way is over).
  void drop();

 private:
  std::shared_ptr<OffLoopState> s_;
};

class OffLoop {
 public:
  // Runs off the loop; returns what runs on the loop with its result.
  using Work = std::function<std::function<void()>()>;
  virtual ~OffLoop() = default;
  virtual OffLoopCall run(boost::asio::io_context& io, Work work) = 0;
};

// One detached thread per call (a lookup every restart, a ledger write every minute: a few).
OffLoop& real_off_loop();

// Runs `work` on a thread of its own and waits for it at most `deadline` (a write at the end of a
// run, whose loop has stopped): true when it was over by then; false: it is left behind, so it
// must own everything it uses.
bool run_bounded(std::function<void()> work, std::chrono::milliseconds deadline);

// Posts `then` to `io` unless the call of `s` was dropped; it runs there unless dropped before.
// What every OffLoop does with its work's answer (the test fake too).
void post_answer(const std::shared_ptr<OffLoopState>& s, boost::asio::io_context& io,
                 std::function<void()> then);

}  // namespace tv
