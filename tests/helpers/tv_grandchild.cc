// tv_grandchild PIDFILE [exit]: forks a child that calls setsid() (leaving the worker's process
// group), writes its pid to PIDFILE and sleeps forever. The parent then sleeps forever, or exits 0
// at once when the second argument is "exit" (the grandchild becomes an orphan).
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace {

void sleep_forever() {
  for (;;) pause();
}

int write_pid(const char* path) {
  const char* tmp_suffix = ".tmp";
  char tmp[4096];
  std::snprintf(tmp, sizeof tmp, "%s%s", path, tmp_suffix);
  std::FILE* f = std::fopen(tmp, "w");
  if (f == nullptr) return -1;
  std::fprintf(f, "%d\n", static_cast<int>(getpid()));
  if (std::fclose(f) != 0) return -1;
  return std::rename(tmp, path);  // the reader never sees a half-written file
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tv_grandchild PIDFILE [exit]\n");
    return 64;
  }
  const bool parent_exits = argc > 2 && std::strcmp(argv[2], "exit") == 0;
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("tv_grandchild: fork");
    return 71;
  }
  if (pid == 0) {
    setsid();
    if (write_pid(argv[1]) != 0) {
      std::perror("tv_grandchild: write PIDFILE");
      _exit(73);
    }
    sleep_forever();
  }
  if (parent_exits) return 0;
  sleep_forever();
}
