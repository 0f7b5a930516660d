// Clock: the goodput accountant's time, in the seconds it reports (Prometheus and JSON figures are
// seconds as numbers; the job's ledger spans containers in Unix seconds, which no event loop's
// clock has), so the accounting stays pure and is unit-tested with FakeClock
// (tests/unit/observability). The real one, LoopTimeClock, reads the event loop's LoopTime
// (common/loop_time.h): one "now" for the loop and the accounting, simulated together in a test
// that simulates the loop.
#pragma once

#include <chrono>

#include "common/loop_time.h"

namespace tv {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds on a monotonic clock (differences only: phases, ages, rates).
  virtual double now() const = 0;
  // Seconds since the Unix epoch (only for timestamps a scraper compares with its own clock).
  virtual double unix_now() const = 0;
};

class LoopTimeClock final : public Clock {
 public:
  explicit LoopTimeClock(const LoopTime& time = real_loop_time()) : time_(time) {}
  double now() const override {
    return std::chrono::duration<double>(time_.now().time_since_epoch()).count();
  }
  double unix_now() const override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

 private:
  const LoopTime& time_;
};

}  // namespace tv
