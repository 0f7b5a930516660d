#include "common/own_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/bounded_read.h"
#include "common/exit_codes.h"

namespace tv {
namespace {

Error refused(const std::string& shown, const std::string& why) {
  return Error{ErrorKind::kConfig, shown + ": " + why};
}

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

}  // namespace

Result<UniqueFd> open_own_directory(int parent, const std::string& name, const std::string& shown) {
  const bool created = ::mkdirat(parent, name.c_str(), 0755) == 0;
  if (!created && errno != EEXIST)
    return refused(shown, std::string("cannot create (") + std::strerror(errno) + ")");
  UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    struct stat st {};
    if (errno == ELOOP ||
        (errno == ENOTDIR && ::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0))
      return refused(shown, std::string(file_kind(st.st_mode)) + ", not a directory of its own");
    return refused(shown, std::string("cannot open (") + std::strerror(errno) + ")");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return refused(shown, std::string("cannot stat (") + std::strerror(errno) + ")");
  if (st.st_uid != ::geteuid())
    return refused(shown, "owned by uid " + std::to_string(st.st_uid) +
                              ", not by trainvisor (uid " + std::to_string(::geteuid()) + ")");
  // One it has just made is its own whatever a default ACL of the share added to its mode.
  if (!created && (st.st_mode & (S_IWGRP | S_IWOTH)))
    return refused(shown, "writable by other users (mode " + octal_mode(st.st_mode) + ")");
  return fd;
}

int open_own_append_file(int dir, const std::string& name, std::string* why) {
  const int fd = ::openat(
      dir, name.c_str(),
      O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0) {
    *why = errno == ELOOP ? "a symbolic link, not followed" : std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    *why = !S_ISREG(st.st_mode) ? "not a regular file" : "it has other hard links";
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace tv
