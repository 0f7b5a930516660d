// tv_die SIGNAL [DELAY_MS]: sleeps DELAY_MS (default 0), then kills itself with SIGNAL (a number)
// after resetting that signal's disposition to the default, so the parent sees "killed by SIGNAL".
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tv_die SIGNAL [DELAY_MS]\n");
    return 64;
  }
  const int sig = std::atoi(argv[1]);
  const long delay_ms = argc > 2 ? std::atol(argv[2]) : 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  ::signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  std::fprintf(stderr, "tv_die: signal %d did not kill the process\n", sig);
  return 70;
}
