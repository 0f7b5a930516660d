// tv_slow_printer INTERVAL_MS COUNT: prints "tick N" (flushed) every INTERVAL_MS, COUNT times,
// then exits 0. A worker that is slow but alive: never a hang.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tv_slow_printer INTERVAL_MS COUNT\n");
    return 64;
  }
  const long interval_ms = std::atol(argv[1]);
  const long count = std::atol(argv[2]);
  for (long i = 0; i < count; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    std::printf("tick %ld\n", i);
    std::fflush(stdout);
  }
  return 0;
}
