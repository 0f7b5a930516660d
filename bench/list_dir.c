/* The floor of any lookup over one directory: list it with getdents64 (256 KiB buffer, as
 * checkpoint/split_listing.cc does for one pass) and count the entries, nothing else. Built and run by
 * bench/checkpoint_latest.sh beside trainvisor and find. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  static char buf[256 * 1024];
  if (argc != 2) return 2;
  int fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return perror(argv[1]), 1;
  long entries = 0;
  ssize_t n;
  while ((n = getdents64(fd, buf, sizeof buf)) > 0)
    for (ssize_t at = 0; at < n; ++entries) at += ((struct dirent64*)(buf + at))->d_reclen;
  if (n < 0) return perror(argv[1]), 1;
  printf("%ld\n", entries);
  return 0;
}
