// libtv_early_sigterm.so, LD_PRELOADed into trainvisor by
// tests/integration/test_hardening_environment.py: as PID 1 its constructor takes itself out of
// the environment (no child inherits it) and sends SIGTERM to its own process, after the
// executable's .preinit_array ran and before any of trainvisor's constructors and main(): the
// "first milliseconds after exec" of a SIGTERM that docker stop or the kubelet sends while PID 1
// is still starting.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void tv_early_sigterm() {
  if (getpid() != 1) return;
  unsetenv("LD_PRELOAD");
  kill(getpid(), SIGTERM);
}
