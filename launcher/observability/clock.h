// Clock: the one seam for time in the observability module, so the goodput accounting can be
// unit-tested with simulated time (FakeClock in tests/unit/observability) and never sleeps.
#pragma once

#include <chrono>

namespace tv {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds on a monotonic clock (differences only: phases, ages, rates).
  virtual double now() const = 0;
  // Seconds since the Unix epoch (only for timestamps a scraper compares with its own clock).
  virtual double unix_now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  double now() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  double unix_now() const override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace tv
