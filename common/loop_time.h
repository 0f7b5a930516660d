// LoopTime: the event loop's clock and its timers. Every timer of an event loop (the
// Supervisor's grace, drain, hang, stacks and backoff timers, the rendezvous' deadlines and
// tickers, the metrics server's retry, the ledger's interval) is a LoopTimer made from one
// LoopTime, and every "now" those owners compare against is that LoopTime's now(), so a unit test
// that hands them a simulated LoopTime (tests/unit/fakes/sim_loop_time.h) drives their time
// itself: no sleep, no real timeout, the same order every run (Envoy's SimulatedTimeSystem is the
// model). The real one, real_loop_time(), is the steady clock and Asio's steady_timer, nothing
// else.
//
// LoopTimer keeps the part of boost::asio::steady_timer's contract its owners use: one pending
// wait at a time; expires_at/expires_after and cancel end a pending wait, whose handler then runs
// with boost::asio::error::operation_aborted; a handler already due runs with success even when
// cancel comes after; destroying the timer cancels its wait; handlers always run on the timer's
// io_context, never inside the call that armed or cancelled it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

namespace tv {

using LoopClock = std::chrono::steady_clock;

class LoopTime {
 public:
  using Handler = std::function<void(const boost::system::error_code&)>;

  // One timer's implementation (LoopTimer is its owner's handle to it).
  class Timer {
   public:
    virtual ~Timer() = default;
    virtual std::size_t expires_at(LoopClock::time_point at) = 0;  // pending waits cancelled
    virtual LoopClock::time_point expiry() const = 0;
    virtual void async_wait(Handler handler) = 0;
    virtual std::size_t cancel() = 0;
  };

  virtual ~LoopTime() = default;
  virtual LoopClock::time_point now() const = 0;
  virtual std::unique_ptr<Timer> make_timer(boost::asio::io_context& io) = 0;
  // Outside the loop (once it has stopped): let `d` pass before looking again for what another
  // thread posts (the end of a run waiting for its children's exits). Real: the thread sleeps;
  // simulated: the clock moves on by d, firing what falls due.
  virtual void pause(LoopClock::duration d) = 0;
};

// The steady clock and boost::asio::steady_timer: the only LoopTime of product code.
LoopTime& real_loop_time();

class LoopTimer {
 public:
  explicit LoopTimer(boost::asio::io_context& io, LoopTime& time = real_loop_time())
      : time_(&time), impl_(time.make_timer(io)) {}
  LoopTimer(const LoopTimer&) = delete;
  LoopTimer& operator=(const LoopTimer&) = delete;

  std::size_t expires_after(LoopClock::duration d) { return impl_->expires_at(time_->now() + d); }
  std::size_t expires_at(LoopClock::time_point at) { return impl_->expires_at(at); }
  LoopClock::time_point expiry() const { return impl_->expiry(); }
  // handler(const boost::system::error_code&); it is copied into a std::function.
  template <class H>
  void async_wait(H&& handler) {
    impl_->async_wait(LoopTime::Handler(std::forward<H>(handler)));
  }
  std::size_t cancel() { return impl_->cancel(); }
  LoopTime& time() const { return *time_; }

 private:
  LoopTime* time_;
  std::unique_ptr<LoopTime::Timer> impl_;
};

// After the loop has stopped (the end of a run): runs what is ready on `io`, then pauses `step`
// on `time`, until `done()` (true) or `rounds` rounds have passed (false). What the end waits for
// this way (children's exits, the last frames, a side query's answer) is each bounded so.
template <class Done>
bool poll_until(boost::asio::io_context& io, LoopTime& time, LoopClock::duration step, int rounds,
                Done&& done) {
  for (int i = 0; i < rounds; ++i) {
    io.restart();
    io.poll();
    if (done()) return true;
    time.pause(step);
  }
  return false;
}

}  // namespace tv
