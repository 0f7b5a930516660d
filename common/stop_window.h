// How long each platform waits between its SIGTERM and its SIGKILL, and the grace period that
// trainvisor uses there by default: a few seconds under the window, so that trainvisor's own
// SIGKILL to the workers, the root-cause report and its exit all happen before the platform's.
// One table for `run` (the default of --grace-period) and `render` (the rendered stop settings).
// docs/platforms/README.md explains each figure.
#pragma once

#include <string_view>

namespace tv {

struct StopWindow {
  int window_seconds;  // the platform's SIGTERM -> SIGKILL window
  int grace_seconds;   // trainvisor's default --grace-period there
  std::string_view what;
};

// Each platform's window: its row in common/platforms.h (stop_window there).

}  // namespace tv
