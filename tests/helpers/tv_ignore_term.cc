// tv_ignore_term [SECONDS]: ignores SIGTERM and SIGINT, prints "ready" (flushed), then sleeps
// SECONDS (default 3600). Only SIGKILL (or another signal) ends it early.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  const long seconds = argc > 1 ? std::atol(argv[1]) : 3600;
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  std::printf("ready\n");
  std::fflush(stdout);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}
