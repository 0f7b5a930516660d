// Reading a whole file that someone else controls (a resource config, a worker's error file, a
// pointer file, a probe's result), so that no such file can hang or bloat the reader.
//
// The file is opened with O_NONBLOCK (a FIFO cannot block open(2)), checked on the opened
// descriptor to be a regular file (a FIFO, /dev/zero, a socket or a directory is refused), and read
// with a hard cap: the read stops after max_bytes + 1 bytes, so a file that is too large (or grows
// while it is read) costs at most max_bytes of memory and is refused. Never throws.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "common/result.h"

namespace tv {

// Caps used across the tree; each reader picks the one that matches what it reads.
inline constexpr std::size_t kSmallFileCap = 64 * 1024;         // pointer files, sysfs, stat
inline constexpr std::size_t kConfigFileCap = 4 * 1024 * 1024;  // resourceconfig, error files
inline constexpr std::size_t kLogFileCap = 64 * 1024 * 1024;    // NCCL logs, plugin libraries

// The contents, or an Error (exit code 78) whose message names the path and the reason:
//   "<path>: cannot open (No such file or directory)"
//   "<path>: not a regular file (a FIFO)"
//   "<path>: larger than 4194304 bytes; not read"
Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes);
// The same, but a symbolic link at `path` (its last component) is refused, not followed:
//   "<path>: a symbolic link; not followed"
Result<std::string> read_regular_file_nofollow(const std::string& path, std::size_t max_bytes);

// The last `max_bytes` of a regular file (all of it when smaller), opened and checked as above, a
// link refused as read_regular_file_nofollow refuses it: a log of any size costs at most max_bytes
// (its first line may be cut). Errors as above.
Result<std::string> read_regular_tail(const std::string& path, std::size_t max_bytes);

// What a file of `mode` is, for a message: "a FIFO", "a character device", "a symbolic link" ...
const char* file_kind(mode_t mode);

}  // namespace tv
