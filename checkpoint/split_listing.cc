#include "checkpoint/split_listing.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include "common/exit_codes.h"
#include "common/unique_fd.h"

namespace tv {
namespace {

constexpr long kExt4Magic = 0xEF53;  // EXT4_SUPER_MAGIC (also ext2 and ext3)
constexpr std::uint64_t kEnd = std::numeric_limits<std::int64_t>::max();  // ext4's 64-bit EOF
constexpr std::size_t kPartBuffer = 32 * 1024;  // reads at most ~800 names past a slice's end

// A one-pass buffer: 32 KiB (from the heap, reused) for small directories, up to 256 KiB (about 20
// system calls for 100,000 names) for large ones.
std::size_t whole_buffer(std::uint64_t dir_bytes) {
  return static_cast<std::size_t>(
      std::clamp<std::uint64_t>(dir_bytes * 2, kPartBuffer, std::uint64_t{256} * 1024));
}

// Offsets to reserve for a directory's names: ext4 and xfs spend at least ~32 bytes of directory
// per checkpoint name; capped (4 Mi names) against a file system that reports a huge size.
std::size_t names_hint(std::uint64_t dir_bytes) {
  return static_cast<std::size_t>(std::min<std::uint64_t>(dir_bytes / 32, std::uint64_t{1} << 22));
}

Error os_error(const char* what) {
  return Error{ErrorKind::kFailed, std::string(what) + ": " + std::strerror(errno)};
}

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

// One slice of positions [from, to), read through its own file descriptor; unbounded: the whole
// directory, whatever its positions are (NFS cookies may look negative). Each on cache lines of its
// own: the threads update theirs for every name.
struct alignas(128) Slice {
  std::uint64_t from = 0, to = kEnd;
  bool bounded = true;
  Listing listing;
  std::string first;  // the first name read ("." and ".." too)
  enum class Last : std::uint8_t { kNothing, kDot, kFile, kOther } last = Last::kNothing;
};

std::string_view last_name(const Slice& s) {
  switch (s.last) {
    case Slice::Last::kFile:
      return s.listing.files.back();
    case Slice::Last::kOther:
      return s.listing.others.back().name;
    default:
      return {};
  }
}

void keep(Slice& s, std::string_view name, EntryType type) {
  if (s.last == Slice::Last::kNothing && s.bounded) s.first = name;
  if (name == "." || name == "..") {
    s.last = Slice::Last::kDot;
  } else if (type == EntryType::kFile && s.listing.files.add(name)) {
    s.last = Slice::Last::kFile;
  } else {
    s.listing.others.push_back({std::string(name), type});
    s.last = Slice::Last::kOther;
  }
}

Status read_slice(int fd, std::size_t buffer_bytes, Slice& s) {
  if (s.from != 0 && ::lseek(fd, static_cast<off_t>(s.from), SEEK_SET) < 0)
    return os_error("lseek");
  const auto buffer = std::make_unique_for_overwrite<char[]>(buffer_bytes);
  for (;;) {
    const ssize_t n = ::getdents64(fd, buffer.get(), buffer_bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_error("getdents64");
    if (n == 0) return ok_status();
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buffer.get() + at);
      at += e->d_reclen;
      keep(s, e->d_name, entry_type(e->d_type));
      if (s.bounded && static_cast<std::uint64_t>(e->d_off) >= s.to) return ok_status();
    }
  }
}

void read_slice_of(const std::string& dir, Slice& s, Status& status) {
  try {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
    status = fd.get() < 0 ? Status(os_error("open")) : read_slice(fd.get(), kPartBuffer, s);
  } catch (const std::bad_alloc&) {
    status = Error{ErrorKind::kFailed, "out of memory"};
  }
}

bool on_ext4(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && fs.f_type == kExt4Magic;
}

// Runs every slice, each on its own thread where one can be started, else on this one.
void read_all(const std::string& dir, std::vector<Slice>& slices, std::vector<Status>& status) {
  std::vector<std::thread> threads;
  std::size_t inline_from = slices.size();
  for (std::size_t i = 1; i < slices.size(); ++i) {
    try {
      threads.emplace_back(read_slice_of, std::cref(dir), std::ref(slices[i]), std::ref(status[i]));
    } catch (const std::system_error&) {  // EAGAIN: a pids limit, say
      inline_from = i;
      break;
    }
  }
  read_slice_of(dir, slices[0], status[0]);
  for (std::size_t i = inline_from; i < slices.size(); ++i)
    read_slice_of(dir, slices[i], status[i]);
  for (auto& t : threads) t.join();
}

// A slice's last name that is also the first of the next slice that read anything was past the
// slice's end (its slice was empty, or the file system's d_off was only a lower bound): dropped.
void drop_overlaps(std::vector<Slice>& slices) {
  for (std::size_t i = 0; i < slices.size(); ++i) {
    Slice& s = slices[i];
    std::size_t j = i + 1;
    while (j < slices.size() && slices[j].last == Slice::Last::kNothing) ++j;
    if (j == slices.size() || last_name(s).empty() || last_name(s) != slices[j].first) continue;
    if (s.last == Slice::Last::kFile)
      s.listing.files.pop_back();
    else
      s.listing.others.pop_back();
  }
}

// ext4's 64-bit position of a name is (major hash >> 1) << 32 | minor hash (ext4fs_dirhash clears
// the major's low bit, so nothing is lost), and names come out in that order. Slices start at a
// whole major hash (minor 0): a slice is exactly the names whose major hash is in its range.
std::uint64_t slice_start(unsigned i, unsigned parts) {
  constexpr std::uint64_t kMajors = (kEnd >> 32) + 1;  // 2^31 values of major >> 1
  return (kMajors / parts * i) << 32;
}

// Lists dir in `parts` slices into out; false, and out untouched, when any slice could not be read
// (an unhashed ext4 directory refuses an lseek past its largest byte offset: EINVAL).
bool list_in_slices(const std::string& dir, unsigned parts, std::uint64_t dir_bytes, Listing& out) {
  std::vector<Slice> slices(parts);
  for (unsigned i = 0; i < parts; ++i) {
    slices[i].from = slice_start(i, parts);
    slices[i].to = i + 1 == parts ? kEnd : slice_start(i + 1, parts);
    slices[i].listing.files.reserve(names_hint(dir_bytes) / parts);
  }
  std::vector<Status> status(parts, ok_status());
  read_all(dir, slices, status);
  for (const auto& s : status)
    if (!s) return false;
  drop_overlaps(slices);
  std::size_t names = out.files.size();
  for (const auto& s : slices) names += s.listing.files.size();
  out.files.reserve(names);  // once: the appends below never copy the offsets again
  for (auto& s : slices) {
    out.files.append(std::move(s.listing.files));
    for (auto& o : s.listing.others) out.others.push_back(std::move(o));
  }
  return true;
}

}  // namespace

unsigned parts_for(std::uint64_t dir_bytes) {
  const std::uint64_t by_size = std::max<std::uint64_t>(1, dir_bytes / kSplitBytes);
  if (by_size == 1) return 1;  // most directories: no sched_getaffinity for each of them
  cpu_set_t set;
  CPU_ZERO(&set);
  const unsigned cpus =
      ::sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set)) : 1;
  return static_cast<unsigned>(std::min<std::uint64_t>({by_size, cpus, kMostParts}));
}

Result<unsigned> list_split(const std::string& dir, unsigned parts, std::uint64_t dir_bytes,
                            Listing& out) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return Error{ErrorKind::kFailed, std::strerror(errno)};
  if (parts > 1 && on_ext4(fd.get()) && list_in_slices(dir, parts, dir_bytes, out)) return parts;
  Slice whole;
  whole.bounded = false;
  whole.listing = std::move(out);
  whole.listing.files.reserve(whole.listing.files.size() + names_hint(dir_bytes));
  const Status s = read_slice(fd.get(), whole_buffer(dir_bytes), whole);
  out = std::move(whole.listing);
  if (!s) return s.error();
  return 1u;
}

}  // namespace tv
