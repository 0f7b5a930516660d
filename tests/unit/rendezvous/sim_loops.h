// SimLoops: the event loops of a multi-node rendezvous test, in one thread, on simulated time.
// Each node process is an io_context with its own SimLoopTime (tests/unit/fakes/sim_loop_time.h);
// a frozen process's loop neither runs nor sees its time move, as a hung process's would not.
//
// Socket I/O is not time: settle() polls every running loop until none has anything left to do
// (loopback sockets deliver within the sender's system call; a short wait covers the rest). Time
// moves only in advance() and advance_until(), from deadline to deadline, settling after each, so
// every timeout fires at its simulated instant, whatever the machine's load.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tests/unit/fakes/sim_loop_time.h"

namespace tv::testing {

class SimLoops {
 public:
  struct Loop {
    boost::asio::io_context io;
    SimLoopTime time;
    bool running = true;
  };

  SimLoops() { add(); }
  Loop& main() { return *loops_.front(); }
  Loop& add() { return *loops_.emplace_back(std::make_unique<Loop>()); }
  LoopClock::time_point now() const { return loops_.front()->time.now(); }

  // Runs every ready handler of every running loop, and the waits due now, until all are quiet.
  void settle() {
    using namespace std::chrono_literals;
    for (int quiet = 0; quiet < 2;) {
      std::size_t ran = 0;
      for (auto& l : loops_)
        if (l->running) {
          l->time.run_ready();
          l->io.restart();
          ran += l->io.poll();
        }
      if (ran == 0)  // nothing ready: a moment for the kernel's half of a loopback exchange
        for (auto& l : loops_)
          if (l->running) {
            l->io.restart();
            ran += l->io.run_one_for(1ms);
          }
      quiet = ran == 0 ? quiet + 1 : 0;
    }
  }

  // Moves every running loop's time forward by d, deadline by deadline.
  void advance(LoopClock::duration d) {
    advance_until([] { return false; }, d);
  }

  // Moves time forward, deadline by deadline, until `pred` holds (true) or `limit` has passed
  // (false). `pred` is checked after each deadline, so the instant it first holds is now().
  bool advance_until(const std::function<bool()>& pred, LoopClock::duration limit) {
    settle();
    const auto end = now() + limit;
    while (!pred()) {
      const auto next = next_deadline();
      const auto to = next && *next <= end ? *next : end;
      move_to(to);
      settle();
      if (to == end) return pred();
    }
    return true;
  }

  // Runs the loops (no time moves) until `pred` holds: for work done on another thread (a
  // probe). The real-time bound only keeps a bug from hanging the suite.
  bool settle_until(const std::function<bool()>& pred,
                    std::chrono::seconds guard = std::chrono::seconds(20)) {
    using namespace std::chrono_literals;
    const auto end = std::chrono::steady_clock::now() + guard;
    for (settle(); !pred() && std::chrono::steady_clock::now() < end; settle())
      for (auto& l : loops_)
        if (l->running) {
          l->io.restart();
          l->io.run_one_for(5ms);
        }
    return pred();
  }

 private:
  std::optional<LoopClock::time_point> next_deadline() const {
    std::optional<LoopClock::time_point> next;
    for (auto& l : loops_)
      if (l->running)
        if (auto d = l->time.next_deadline(); d && (!next || *d < *next)) next = d;
    return next;
  }
  void move_to(LoopClock::time_point t) {
    for (auto& l : loops_)
      if (l->running && t > l->time.now()) l->time.advance(t - l->time.now());
  }

  std::vector<std::unique_ptr<Loop>> loops_;
};

}  // namespace tv::testing
