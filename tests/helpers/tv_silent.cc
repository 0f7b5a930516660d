// tv_silent SECONDS: prints nothing and sleeps SECONDS (default 3600), then exits 0.
#include <chrono>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  const long seconds = argc > 1 ? std::atol(argv[1]) : 3600;
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  return 0;
}
