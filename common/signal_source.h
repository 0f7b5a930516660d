// SignalSource: where an event loop gets the process's termination and user signals from. The
// real one is Init (common/init.h: its signal thread, sigwaitinfo); the Supervisor reaches it only
// through this interface, so a unit test hands it a fake that delivers SIGTERM, SIGINT, SIGHUP,
// SIGUSR1 ... on the test's own thread (tests/unit/node/fake_signals.h).
#pragma once

#include <atomic>
#include <csignal>
#include <functional>
#include <memory>

namespace tv {

// The signals that stop the job: TERM, INT and HUP, and only they set stop_requested. Every other
// routed signal (the stacks signal, USR1/USR2, QUIT and the others Init forwards to the workers)
// leaves the job's course as it was.
inline bool is_stop_signal(int sig) { return sig == SIGTERM || sig == SIGINT || sig == SIGHUP; }

// An installed route: signals go to its function until it is destroyed.
class SignalRoute {
 public:
  virtual ~SignalRoute() = default;
};

class SignalSource {
 public:
  using OnSignal = std::function<void(int sig)>;
  virtual ~SignalSource() = default;
  // While the returned route lives, TERM/INT/HUP, the stacks signal and the forwarded ones go to
  // `fn`, on the source's own thread (post to your event loop). One route at a time.
  [[nodiscard]] virtual std::unique_ptr<SignalRoute> route(OnSignal fn) = 0;
  // Set for good when a stop signal (is_stop_signal) arrives, before the route runs: long work on
  // the routed loop polls it to end early instead of keeping the posted signal waiting.
  virtual const std::atomic<bool>& stop_requested() const = 0;
  // The stop signal this process got, taken by the source already or still pending in the
  // kernel (not yet taken: its thread may not have run); 0 for none. Every node of a job stopped
  // from outside gets one, and a quicker node's exit can be read here first: a lost peer is read
  // in its light (docs/coordination.md, "Stopped from outside").
  virtual int pending_stop_signal() const = 0;
};

}  // namespace tv
