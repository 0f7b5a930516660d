#include "common/whole_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "common/output_sink.h"
#include "common/unique_fd.h"

namespace tv {
namespace {

constexpr int kWriteFlags = O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
constexpr auto kStreamFlush = std::chrono::milliseconds(2000);

Error not_written(const std::string& path, const std::string& why) {
  return Error{ErrorKind::kFailed, path + ": not written (" + why + ")"};
}

// Writes all of `body` and closes `fd`; a full pipe or disk is an error, never a wait. 0 or errno.
int write_and_close(int fd, std::string_view body) {
  int err = 0;
  std::size_t done = 0;
  while (done < body.size()) {
    const ssize_t n = ::write(fd, body.data() + done, body.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  return err;
}

// 16 hex digits from getrandom(2): a temporary name nobody can guess in advance.
std::string random_suffix() {
  unsigned char b[8] = {};
  if (::getrandom(b, sizeof b, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof b)) {
    const auto t = std::chrono::steady_clock::now().time_since_epoch().count() ^ ::getpid();
    std::memcpy(b, &t, sizeof b);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (unsigned char c : b) {
    s += kHex[c >> 4];
    s += kHex[c & 15];
  }
  return s;
}

// An existing regular file (that rename cannot replace: a bind mount) or a character device,
// written where it is. A regular file with another hard link is someone else's file too.
Result<bool> write_in_place(int dir, const std::string& base, const std::string& path,
                            std::string_view body) {
  const int fd = ::openat(dir, base.c_str(), kWriteFlags);
  if (fd < 0) return not_written(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)) ||
      (S_ISREG(st.st_mode) && (st.st_nlink != 1 || ::ftruncate(fd, 0) != 0))) {
    const bool linked = S_ISREG(st.st_mode) && st.st_nlink != 1;
    ::close(fd);
    return not_written(path, linked ? "it has other hard links" : "not a regular file");
  }
  if (const int err = write_and_close(fd, body)) return not_written(path, std::strerror(err));
  return true;
}

// The new contents under an unpredictable name beside the target, then renamed (or linked) there.
Result<bool> write_new(int dir, const std::string& base, const std::string& path,
                       std::string_view body, const WholeFileOptions& o) {
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    tmp = "." + base + ".tmp-" + random_suffix();
    fd = ::openat(dir, tmp.c_str(), O_CREAT | O_EXCL | kWriteFlags, o.mode);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return not_written(path, std::strerror(errno));
  if (const int err = write_and_close(fd, body)) {
    ::unlinkat(dir, tmp.c_str(), 0);
    return not_written(path, std::strerror(err));
  }
  // only_if_absent: link(2) fails with EEXIST instead of replacing a file made meanwhile.
  const bool placed = o.only_if_absent ? ::linkat(dir, tmp.c_str(), dir, base.c_str(), 0) == 0
                                       : ::renameat(dir, tmp.c_str(), dir, base.c_str()) == 0;
  const int err = errno;
  if (!placed || o.only_if_absent) ::unlinkat(dir, tmp.c_str(), 0);
  if (placed) return true;
  if (o.only_if_absent && err == EEXIST) return false;
  if (err == EBUSY) return write_in_place(dir, base, path, body);
  return not_written(path, std::strerror(err));
}

}  // namespace

int standard_stream_of(const std::string& path) {
  for (int fd : {1, 2}) {
    const std::string n = std::to_string(fd);
    if (path == "/dev/fd/" + n || path == "/proc/self/fd/" + n) return fd;
  }
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  return 0;
}

Result<bool> write_whole_file(const std::string& path, std::string_view body,
                              const WholeFileOptions& o) {
  if (const int fd = standard_stream_of(path)) {
    OutputSink& sink = fd == 1 ? stdout_sink() : stderr_sink();
    sink.push(body);
    sink.flush(kStreamFlush);
    return true;
  }
  const std::filesystem::path p(path);
  const std::string base = p.filename().string();
  if (base.empty() || base == "." || base == "..") return not_written(path, "not a file name");
  const std::string dir_path = p.has_parent_path() ? p.parent_path().string() : ".";
  const UniqueFd dir(::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return not_written(path, std::strerror(errno));
  struct stat st {};
  if (::fstatat(dir.get(), base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (o.only_if_absent) return false;
    if (S_ISLNK(st.st_mode)) return not_written(path, "a symbolic link; not followed");
    if (S_ISCHR(st.st_mode)) return write_in_place(dir.get(), base, path, body);
    if (!S_ISREG(st.st_mode)) return not_written(path, "not a regular file");
  } else if (errno != ENOENT) {
    return not_written(path, std::strerror(errno));
  }
  return write_new(dir.get(), base, path, body, o);
}

}  // namespace tv
