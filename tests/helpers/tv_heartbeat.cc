// tv_heartbeat INTERVAL_MS COUNT: touches $TRAINVISOR_HEARTBEAT_FILE (creates it, sets its mtime
// to now) every INTERVAL_MS, COUNT times, printing nothing; then exits 0. Exits 78 when the
// variable is unset and 73 when the file cannot be touched.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

bool touch(const char* path) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = futimens(fd, nullptr) == 0;
  close(fd);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: tv_heartbeat INTERVAL_MS COUNT\n");
    return 64;
  }
  const char* path = std::getenv("TRAINVISOR_HEARTBEAT_FILE");
  if (path == nullptr || *path == '\0') {
    std::fprintf(stderr, "tv_heartbeat: TRAINVISOR_HEARTBEAT_FILE is not set\n");
    return 78;
  }
  const long interval_ms = std::atol(argv[1]);
  const long count = std::atol(argv[2]);
  for (long i = 0; i < count; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    if (!touch(path)) {
      std::perror("tv_heartbeat: touch TRAINVISOR_HEARTBEAT_FILE");
      return 73;
    }
  }
  return 0;
}
