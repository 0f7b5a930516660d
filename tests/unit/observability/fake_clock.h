// Simulated time for the observability unit tests: tests advance it; nothing sleeps.
#pragma once

#include "launcher/observability/clock.h"

namespace tv {

class FakeClock final : public Clock {
 public:
  double now() const override { return t_; }
  double unix_now() const override { return 1.7e9 + t_; }
  void set(double t) { t_ = t; }

 private:
  double t_ = 0;
};

}  // namespace tv
