// SimLoopTime: a LoopTime (common/loop_time.h) whose clock moves only when the test says so, for
// unit tests of the event loop's owners (Supervisor, LocalCluster, the rendezvous, the metrics
// server) without a sleep or a real timeout. advance(d) walks time forward to each due timer in
// deadline order, sets now() to that deadline, posts the handler of every wait due then (in the
// order they were armed) and polls the io_contexts, so a handler that arms another timer inside
// the window sees it fire in its turn; then now() is the end of the window. Cancelled and
// destroyed timers post operation_aborted, as Asio's do. It must outlive its timers.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "common/loop_time.h"

namespace tv::testing {

class SimLoopTime final : public LoopTime {
 public:
  SimLoopTime();
  ~SimLoopTime() override;
  LoopClock::time_point now() const override { return now_; }
  std::unique_ptr<Timer> make_timer(boost::asio::io_context& io) override;
  void pause(LoopClock::duration d) override { advance(d); }

  // Fires, in order, every wait due within d, polling the io_contexts after each.
  void advance(LoopClock::duration d);
  // Fires what is due at now() and runs every ready handler of every io_context.
  void run_ready() { advance(LoopClock::duration::zero()); }
  // Advances to the next pending deadline (if any) and fires it; false when nothing is pending.
  bool advance_to_next();
  std::size_t pending() const { return waits_.size(); }
  std::optional<LoopClock::time_point> next_deadline() const;

  // Internal to the simulated timers.
  using Key = std::pair<LoopClock::time_point, std::uint64_t>;
  Key add_wait(LoopClock::time_point at, boost::asio::io_context* io, Handler handler);
  bool remove_wait(const Key& key);  // posts operation_aborted; false when it was not pending

 private:
  struct Wait {
    boost::asio::io_context* io;
    Handler handler;
  };
  void poll_all();
  LoopClock::time_point now_;
  std::uint64_t seq_ = 0;
  std::map<Key, Wait> waits_;
  std::set<boost::asio::io_context*> contexts_;
};

}  // namespace tv::testing
