// tv_fd_check: exits 0 when no file descriptor above 2 is open; otherwise prints each extra fd
// and its target ("fd 5 -> pipe:[1234]") to stderr and exits 3. Proves the launcher leaks no
// descriptors into workers.
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) {
    std::perror("tv_fd_check: opendir /proc/self/fd");
    return 71;
  }
  const int own = dirfd(dir);
  int extra = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const int fd = std::atoi(entry->d_name);
    if (fd <= 2 || fd == own) continue;
    const std::string link = std::string("/proc/self/fd/") + entry->d_name;
    char target[4096] = {};
    const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    std::fprintf(stderr, "fd %d -> %s\n", fd, n > 0 ? target : "?");
    ++extra;
  }
  closedir(dir);
  return extra == 0 ? 0 : 3;
}
