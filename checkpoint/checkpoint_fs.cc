#include "checkpoint/checkpoint_fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "checkpoint/split_listing.h"
#include "common/exit_codes.h"
#include "common/unique_fd.h"

namespace tv {
namespace {

Error os_error() { return Error{ErrorKind::kFailed, std::strerror(errno)}; }

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

Status CheckpointFs::list_into(const std::string& dir, std::uint64_t, Listing& out) {
  return list_each(dir, [&](std::string_view name, EntryType type) {
    if (type != EntryType::kFile || !out.files.add(name))
      out.others.push_back({std::string(name), type});
  });
}

Status RealCheckpointFs::list_each(const std::string& dir, const EachEntry& each) {
  Listing listing;
  auto listed = list_split(dir, 1, 0, listing);
  if (!listed) return listed.error();
  for (std::size_t i = 0; i < listing.files.size(); ++i) each(listing.files[i], EntryType::kFile);
  for (const auto& other : listing.others) each(other.name, other.type);
  return ok_status();
}

Status RealCheckpointFs::list_into(const std::string& dir, std::uint64_t dir_bytes, Listing& out) {
  auto listed = list_split(dir, split_ ? parts_for(dir_bytes) : 1, dir_bytes, out);
  if (!listed) return listed.error();
  return ok_status();
}

Result<FileStat> RealCheckpointFs::stat(const std::string& path) {
  struct statx sx {};
  const unsigned mask =
      STATX_TYPE | STATX_SIZE | STATX_MTIME | STATX_INO | STATX_BTIME | STATX_CTIME;
  if (::statx(AT_FDCWD, path.c_str(), 0, mask, &sx) != 0) return os_error();
  FileStat st;
  st.is_directory = S_ISDIR(sx.stx_mode);
  st.is_regular = S_ISREG(sx.stx_mode);
  st.size = sx.stx_size;
  st.mtime_ns = to_ns(sx.stx_mtime);
  st.btime_ns = (sx.stx_mask & STATX_BTIME) ? to_ns(sx.stx_btime) : 0;
  st.device = (static_cast<std::uint64_t>(sx.stx_dev_major) << 32) | sx.stx_dev_minor;
  st.inode = sx.stx_ino;
  st.ctime_ns = to_ns(sx.stx_ctime);
  return st;
}

Result<std::string> RealCheckpointFs::read_range(const std::string& path, std::uint64_t offset,
                                                 std::uint64_t length) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) return os_error();
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return os_error();
  if (!S_ISREG(st.st_mode)) return Error{ErrorKind::kFailed, "not a regular file"};
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
