// tv_stamp MODE DIR [SETTLE_MS]: a worker for the supervision benchmarks (bench/*.sh) that writes
// CLOCK_REALTIME timestamps (nanoseconds since the epoch, decimal) to files in DIR, atomically
// (written to a temporary name, then renamed). The same program runs under trainvisor and torchrun.
// Reads LOCAL_RANK, LOCAL_WORLD_SIZE and TORCHELASTIC_RESTART_COUNT (0 when unset).
//
//  restart: writes DIR/start_<count>_<rank> at once. At count 0, the last local rank waits until
//           every rank's start_0_* exists, then SETTLE_MS (default 300), writes DIR/death and exits
//           1; the other count-0 ranks sleep until a signal ends them. At count > 0 it exits 0.
//  term:    blocks SIGTERM, writes DIR/start_<rank>, waits for SIGTERM (sigwaitinfo), writes the
//           time it arrived to DIR/term_<rank>, exits 0.
// Usage errors exit 64, a file that cannot be written 73.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

namespace {

long long now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return (v == nullptr || *v == '\0') ? fallback : std::atol(v);
}

void write_stamp(const std::string& path, long long ns) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr || std::fprintf(f, "%lld\n", ns) < 0 || std::fclose(f) != 0 ||
      std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "tv_stamp: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    std::exit(73);
  }
}

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

int restart_mode(const std::string& dir, long settle_ms) {
  const long count = env_long("TORCHELASTIC_RESTART_COUNT", 0);
  const long rank = env_long("LOCAL_RANK", 0);
  const long size = env_long("LOCAL_WORLD_SIZE", 1);
  write_stamp(dir + "/start_" + std::to_string(count) + "_" + std::to_string(rank), now_ns());
  if (count > 0) return 0;
  if (rank != size - 1) {
    for (;;) pause();
  }
  for (long r = 0; r < size; ++r) {
    while (!exists(dir + "/start_0_" + std::to_string(r))) usleep(1000);
  }
  usleep(static_cast<useconds_t>(settle_ms * 1000));
  write_stamp(dir + "/death", now_ns());
  return 1;
}

int term_mode(const std::string& dir) {
  const long rank = env_long("LOCAL_RANK", 0);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  write_stamp(dir + "/start_" + std::to_string(rank), now_ns());
  while (sigwaitinfo(&set, nullptr) != SIGTERM) {
  }
  write_stamp(dir + "/term_" + std::to_string(rank), now_ns());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || (std::strcmp(argv[1], "restart") != 0 && std::strcmp(argv[1], "term") != 0)) {
    std::fprintf(stderr, "usage: tv_stamp restart|term DIR [SETTLE_MS]\n");
    return 64;
  }
  if (std::strcmp(argv[1], "term") == 0) return term_mode(argv[2]);
  return restart_mode(argv[2], argc > 3 ? std::atol(argv[3]) : 300);
}
