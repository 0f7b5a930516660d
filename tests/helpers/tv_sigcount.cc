// tv_sigcount DIR [SIG...]: counts every delivery of SIGUSR1 and SIGTERM, and of each further
// signal named (QUIT, WINCH, TSTP, RTMIN+3, ...) (a signal handler per delivery, so two deliveries
// are two counts unless both arrive while one is still pending), and keeps DIR/sig-$RANK.json
// ({"USR1": n, "TERM": n, "QUIT": n, ...}: USR1 and TERM, then the signals named, in that order)
// current, written atomically; creates DIR/up-$RANK once the handlers are installed. After the
// first SIGTERM it waits 3 s more (a duplicate would arrive then), writes the counts and exits 0.
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

volatile sig_atomic_t counts[_NSIG] = {};

void on_signal(int sig) { counts[sig] = counts[sig] + 1; }

// "QUIT" -> SIGQUIT, "RTMIN+3" -> SIGRTMIN + 3; 0 when unknown.
int signal_number(const std::string& name) {
  if (name.rfind("RTMIN+", 0) == 0) return SIGRTMIN + std::atoi(name.c_str() + 6);
  if (name == "RTMAX") return SIGRTMAX;
  for (int s = 1; s < SIGRTMIN; ++s)
    if (const char* abbrev = sigabbrev_np(s); abbrev && name == abbrev) return s;
  return 0;
}

using Counted = std::vector<std::pair<std::string, int>>;

std::string snapshot(const Counted& counted) {
  std::string out;
  for (const auto& [name, sig] : counted)
    out += (out.empty() ? "" : ", ") + ("\"" + name + "\": ") + std::to_string(counts[sig]);
  return out;
}

void save(const std::string& path, const std::string& text) {
  {
    std::ofstream out(path + ".tmp");
    out << "{" << text << "}\n";
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  const char* rank = std::getenv("RANK");
  const std::string dir = argv[1];
  const std::string path = dir + "/sig-" + (rank ? rank : "norank") + ".json";
  Counted counted{{"USR1", SIGUSR1}, {"TERM", SIGTERM}};
  for (int i = 2; i < argc; ++i) {
    const int sig = signal_number(argv[i]);
    if (sig <= 0 || sig >= _NSIG) return 64;
    counted.emplace_back(argv[i], sig);
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (const auto& [name, sig] : counted) sigaction(sig, &sa, nullptr);
  std::string seen = snapshot(counted);
  save(path, seen);
  std::ofstream(dir + "/up-" + (rank ? rank : "norank")).put('\n');
  auto end = std::chrono::steady_clock::time_point::max();
  while (std::chrono::steady_clock::now() < end) {
    if (const std::string now = snapshot(counted); now != seen) {
      seen = now;
      save(path, seen);
      if (counts[SIGTERM] > 0 && end == std::chrono::steady_clock::time_point::max())
        end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  save(path, snapshot(counted));
  return 0;
}
