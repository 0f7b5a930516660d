// FakeSignals: a SignalSource (common/signal_source.h) the test fires itself. deliver(sig) does
// what Init's signal thread does: TERM/INT/HUP set stop_requested first, then the route runs
// (the Supervisor's route posts the signal to its loop).
#pragma once

#include <atomic>
#include <csignal>
#include <memory>
#include <utility>

#include "common/signal_source.h"

namespace tv::testing {

class FakeSignals final : public SignalSource {
 public:
  std::unique_ptr<SignalRoute> route(OnSignal fn) override {
    fn_ = std::move(fn);
    return std::make_unique<Route>(this);
  }
  const std::atomic<bool>& stop_requested() const override { return stop_; }
  int pending_stop_signal() const override { return taken_ ? taken_ : pending; }
  int pending = 0;  // a stop signal the kernel holds that the source has not taken yet

  // False when nothing is routed (Init would end the process then).
  bool deliver(int sig) {
    if (is_stop_signal(sig)) {
      if (!taken_) taken_ = sig;
      stop_ = true;
    }
    if (!fn_) return false;
    fn_(sig);
    return true;
  }
  bool routed() const { return static_cast<bool>(fn_); }

 private:
  class Route final : public SignalRoute {
   public:
    explicit Route(FakeSignals* s) : s_(s) {}
    ~Route() override { s_->fn_ = nullptr; }

   private:
    FakeSignals* s_;
  };
  OnSignal fn_;
  std::atomic<bool> stop_{false};
  int taken_ = 0;
};

}  // namespace tv::testing
