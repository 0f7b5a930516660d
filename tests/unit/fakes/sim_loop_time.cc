#include "tests/unit/fakes/sim_loop_time.h"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

namespace tv::testing {
namespace {

class SimTimer final : public LoopTime::Timer {
 public:
  SimTimer(SimLoopTime& time, boost::asio::io_context& io) : time_(time), io_(io) {}
  ~SimTimer() override { cancel(); }
  std::size_t expires_at(LoopClock::time_point at) override {
    const std::size_t n = cancel();
    expiry_ = at;
    return n;
  }
  LoopClock::time_point expiry() const override { return expiry_; }
  void async_wait(LoopTime::Handler handler) override {
    // Asio allows several waits on one timer; its owners here keep one, so one is kept.
    cancel();
    key_ = time_.add_wait(expiry_, &io_, std::move(handler));
  }
  std::size_t cancel() override {
    if (!key_) return 0;
    const bool was = time_.remove_wait(*key_);
    key_.reset();
    return was ? 1 : 0;
  }

 private:
  SimLoopTime& time_;
  boost::asio::io_context& io_;
  LoopClock::time_point expiry_{};
  std::optional<SimLoopTime::Key> key_;
};

}  // namespace

// An arbitrary start far from zero, so "now - 10 s" never goes below the clock's epoch.
SimLoopTime::SimLoopTime() : now_(LoopClock::time_point(std::chrono::hours(1000))) {}

// A pending handler may own its own timer (a shared_ptr to the timer in its capture): destroying
// it destroys that timer, whose cancel() looks its wait up here, so each wait leaves the map first.
SimLoopTime::~SimLoopTime() {
  while (!waits_.empty()) waits_.extract(waits_.begin());
}

std::unique_ptr<LoopTime::Timer> SimLoopTime::make_timer(boost::asio::io_context& io) {
  contexts_.insert(&io);
  return std::make_unique<SimTimer>(*this, io);
}

SimLoopTime::Key SimLoopTime::add_wait(LoopClock::time_point at, boost::asio::io_context* io,
                                       Handler handler) {
  const Key key{at, ++seq_};
  waits_.emplace(key, Wait{io, std::move(handler)});
  return key;
}

bool SimLoopTime::remove_wait(const Key& key) {
  auto it = waits_.find(key);
  if (it == waits_.end()) return false;  // already fired: its handler runs with success
  Wait w = std::move(it->second);
  waits_.erase(it);
  boost::asio::post(*w.io,
                    [h = std::move(w.handler)] { h(boost::asio::error::operation_aborted); });
  return true;
}

std::optional<LoopClock::time_point> SimLoopTime::next_deadline() const {
  if (waits_.empty()) return std::nullopt;
  return waits_.begin()->first.first;
}

void SimLoopTime::poll_all() {
  // Until quiet: a handler on one context may post to another.
  for (bool ran = true; ran;) {
    ran = false;
    for (auto* io : contexts_) {
      io->restart();
      if (io->poll() > 0) ran = true;
    }
  }
}

void SimLoopTime::advance(LoopClock::duration d) {
  const auto end = now_ + d;
  poll_all();
  while (!waits_.empty() && waits_.begin()->first.first <= end) {
    // Every wait due at this deadline is posted before any of them runs, as Asio's reactor
    // moves every expired timer to its ready queue at once.
    const auto at = waits_.begin()->first.first;
    if (at > now_) now_ = at;
    while (!waits_.empty() && waits_.begin()->first.first == at) {
      auto it = waits_.begin();
      Wait w = std::move(it->second);
      waits_.erase(it);
      boost::asio::post(*w.io, [h = std::move(w.handler)] { h(boost::system::error_code()); });
    }
    poll_all();
  }
  if (end > now_) now_ = end;
}

bool SimLoopTime::advance_to_next() {
  const auto next = next_deadline();
  if (!next) return false;
  advance(*next > now_ ? *next - now_ : LoopClock::duration::zero());
  return true;
}

}  // namespace tv::testing
