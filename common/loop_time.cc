#include "common/loop_time.h"

#include <boost/asio/steady_timer.hpp>
#include <thread>

namespace tv {
namespace {

class SteadyTimer final : public LoopTime::Timer {
 public:
  explicit SteadyTimer(boost::asio::io_context& io) : timer_(io) {}
  std::size_t expires_at(LoopClock::time_point at) override { return timer_.expires_at(at); }
  LoopClock::time_point expiry() const override { return timer_.expiry(); }
  void async_wait(LoopTime::Handler handler) override { timer_.async_wait(std::move(handler)); }
  std::size_t cancel() override { return timer_.cancel(); }

 private:
  boost::asio::steady_timer timer_;
};

class SteadyTime final : public LoopTime {
 public:
  LoopClock::time_point now() const override { return LoopClock::now(); }
  std::unique_ptr<Timer> make_timer(boost::asio::io_context& io) override {
    return std::make_unique<SteadyTimer>(io);
  }
  void pause(LoopClock::duration d) override { std::this_thread::sleep_for(d); }
};

}  // namespace

LoopTime& real_loop_time() {
  static SteadyTime time;
  return time;
}

}  // namespace tv
