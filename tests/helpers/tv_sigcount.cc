// tv_sigcount DIR: counts every delivery of SIGUSR1 and SIGTERM (a signal handler per delivery,
// so two deliveries are two counts unless both arrive while one is still pending), and keeps
// DIR/sig-$RANK.json ({"USR1": n, "TERM": n}) current, written atomically; creates DIR/up-$RANK
// once the handlers are installed. After the first SIGTERM it waits 3 s more (a duplicate would
// arrive then), writes the counts and exits 0.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace {

volatile sig_atomic_t usr1 = 0;
volatile sig_atomic_t term = 0;

void on_signal(int sig) {
  if (sig == SIGUSR1) usr1 = usr1 + 1;
  if (sig == SIGTERM) term = term + 1;
}

void save(const std::string& path) {
  {
    std::ofstream out(path + ".tmp");
    out << "{\"USR1\": " << usr1 << ", \"TERM\": " << term << "}\n";
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 64;
  const char* rank = std::getenv("RANK");
  const std::string dir = argv[1];
  const std::string path = dir + "/sig-" + (rank ? rank : "norank") + ".json";
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  save(path);
  std::ofstream(dir + "/up-" + (rank ? rank : "norank")).put('\n');
  int seen_usr1 = -1, seen_term = -1;
  auto end = std::chrono::steady_clock::time_point::max();
  while (std::chrono::steady_clock::now() < end) {
    if (usr1 != seen_usr1 || term != seen_term) {
      seen_usr1 = usr1, seen_term = term;
      save(path);
      if (term > 0 && end == std::chrono::steady_clock::time_point::max())
        end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  save(path);
  return 0;
}
