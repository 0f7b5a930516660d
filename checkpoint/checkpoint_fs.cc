#include "checkpoint/checkpoint_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "common/exit_codes.h"
#include "common/unique_fd.h"

namespace tv {
namespace {

Error os_error() { return Error{exit_code::kNone, std::strerror(errno)}; }

EntryType entry_type(unsigned char d_type) {
  switch (d_type) {
    case DT_REG:
      return EntryType::kFile;
    case DT_DIR:
      return EntryType::kDirectory;
    case DT_LNK:
      return EntryType::kSymlink;
    case DT_UNKNOWN:
      return EntryType::kUnknown;
    default:
      return EntryType::kOther;
  }
}

std::int64_t to_ns(const statx_timestamp& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

Result<std::vector<DirEntry>> CheckpointFs::list(const std::string& dir) {
  std::vector<DirEntry> out;
  auto r = list_each(dir, [&](std::string_view name, EntryType type) {
    out.push_back({std::string(name), type});
  });
  if (!r) return r.error();
  return out;
}

// getdents64 with a 256 KiB buffer (glibc's readdir uses 32 KiB): a directory of 100,000
// checkpoints is read in about 20 system calls instead of 130.
Status RealCheckpointFs::list_each(const std::string& dir, const EachEntry& each) {
  constexpr std::size_t kBuffer = 256 * 1024;
  thread_local std::unique_ptr<char[]> buf(new char[kBuffer]);
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return os_error();
  for (;;) {
    const ssize_t n = ::getdents64(fd.get(), buf.get(), kBuffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_error();
    if (n == 0) return ok_status();
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buf.get() + at);
      at += e->d_reclen;
      const std::string_view name(e->d_name);
      if (name != "." && name != "..") each(name, entry_type(e->d_type));
    }
  }
}

Result<FileStat> RealCheckpointFs::stat(const std::string& path) {
  struct statx sx {};
  const unsigned mask = STATX_TYPE | STATX_SIZE | STATX_MTIME | STATX_INO | STATX_BTIME;
  if (::statx(AT_FDCWD, path.c_str(), 0, mask, &sx) != 0) return os_error();
  FileStat st;
  st.is_directory = S_ISDIR(sx.stx_mode);
  st.is_regular = S_ISREG(sx.stx_mode);
  st.size = sx.stx_size;
  st.mtime_ns = to_ns(sx.stx_mtime);
  st.btime_ns = (sx.stx_mask & STATX_BTIME) ? to_ns(sx.stx_btime) : 0;
  st.device = (static_cast<std::uint64_t>(sx.stx_dev_major) << 32) | sx.stx_dev_minor;
  st.inode = sx.stx_ino;
  return st;
}

Result<std::string> RealCheckpointFs::read_range(const std::string& path, std::uint64_t offset,
                                                 std::uint64_t length) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return os_error();
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return os_error();
  if (!S_ISREG(st.st_mode)) return Error{exit_code::kNone, "not a regular file"};
  std::string buf(length, '\0');
  std::uint64_t got = 0;
  while (got < length) {
    const ssize_t n =
        ::pread(fd.get(), buf.data() + got, length - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_error();
    if (n == 0) break;
    got += static_cast<std::uint64_t>(n);
  }
  buf.resize(got);
  return buf;
}

std::int64_t RealCheckpointFs::now_ns() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(now).count();
}

void RealCheckpointFs::sleep_for(std::chrono::milliseconds duration) {
  std::this_thread::sleep_for(duration);
}

}  // namespace tv
