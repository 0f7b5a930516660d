#include "common/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "common/exit_codes.h"
#include "common/unique_fd.h"

namespace tv {

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISREG(mode)) return "a regular file";
  return "not a plain file";
}

namespace {

Error refuse(const std::string& path, const std::string& why) {
  return Error{ErrorKind::kConfig, path + ": " + why};
}

// Reads until EOF or until `out` holds limit bytes. Returns errno, or 0.
int read_up_to(int fd, std::string& out, std::size_t limit) {
  char buf[64 * 1024];
  while (out.size() < limit) {
    const std::size_t want = std::min(sizeof buf, limit - out.size());
    const ssize_t n = ::read(fd, buf, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return 0;
}

// The file at `path` opened without blocking (a FIFO cannot hold open(2)), with its size; a
// regular file only.
Result<UniqueFd> open_regular(const std::string& path, int extra_flags, off_t& size) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | extra_flags));
  if (fd.get() < 0 && errno == ELOOP && (extra_flags & O_NOFOLLOW))
    return refuse(path, "a symbolic link; not followed");
  if (fd.get() < 0) return refuse(path, std::string("cannot open (") + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return refuse(path, std::string("cannot stat (") + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode))
    return refuse(path, std::string("not a regular file (") + file_kind(st.st_mode) + ")");
  size = st.st_size;
  return fd;
}

Result<std::string> read_opened(const std::string& path, int extra_flags, std::size_t max_bytes) {
  off_t size = 0;
  auto opened = open_regular(path, extra_flags, size);
  if (!opened) return opened.error();
  const UniqueFd fd = std::move(*opened);
  if (static_cast<std::uint64_t>(size) > max_bytes)
    return refuse(path, "larger than " + std::to_string(max_bytes) + " bytes (" +
                            std::to_string(size) + "); not read");
  std::string out;
  out.reserve(static_cast<std::size_t>(size));
  if (int err = read_up_to(fd.get(), out, max_bytes + 1); err != 0)
    return refuse(path, std::string("cannot read (") + std::strerror(err) + ")");
  if (out.size() > max_bytes)
    return refuse(
        path, "larger than " + std::to_string(max_bytes) + " bytes (it grew while read); not read");
  return out;
}

}  // namespace

Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes) {
  return read_opened(path, 0, max_bytes);
}

Result<std::string> read_regular_file_nofollow(const std::string& path, std::size_t max_bytes) {
  return read_opened(path, O_NOFOLLOW, max_bytes);
}

Result<std::string> read_regular_tail(const std::string& path, std::size_t max_bytes) {
  off_t size = 0;
  auto fd = open_regular(path, O_NOFOLLOW, size);
  if (!fd) return fd.error();
  const auto want = std::min(static_cast<std::uint64_t>(size), std::uint64_t{max_bytes});
  if (::lseek(fd->get(), size - static_cast<off_t>(want), SEEK_SET) < 0)
    return refuse(path, std::string("cannot seek (") + std::strerror(errno) + ")");
  std::string out;
  if (int err = read_up_to(fd->get(), out, max_bytes); err != 0)
    return refuse(path, std::string("cannot read (") + std::strerror(err) + ")");
  return out;
}

}  // namespace tv
