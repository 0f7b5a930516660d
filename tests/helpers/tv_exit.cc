// tv_exit CODE [DELAY_MS]: sleeps DELAY_MS (default 0), then exits with CODE.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tv_exit CODE [DELAY_MS]\n");
    return 64;
  }
  const int code = std::atoi(argv[1]);
  const long delay_ms = argc > 2 ? std::atol(argv[2]) : 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  return code;
}
