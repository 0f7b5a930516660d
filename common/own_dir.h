// Directories trainvisor makes inside a directory that other users may write too (--log-dir on a
// team's share) and then hands out by name (a worker's error file and heartbeat live in them).
// Each step is openat(2) relative to the directory opened before, so no link planted along the
// way is followed, and a directory is used only when trainvisor could have made it:
//   created 0755 when absent (then used as made, whatever a default ACL added); reused only when
//   it is a real directory (not a symbolic link), owned by trainvisor's user and writable by no
//   one else (no group or other write bit).
// Anything else is refused with one message naming the path and why: a directory another user
// made or can write is one where they can swap a file for a link at any time.
#pragma once

#include <string>

#include "common/result.h"
#include "common/unique_fd.h"

namespace tv {

// `parent`: an open directory; `name`: one path component; `shown`: the path for messages.
// Errors (exit code 78): "<shown>: a symbolic link, not followed",
// "<shown>: owned by uid 65534, not by trainvisor (uid 0)", "<shown>: writable by other users
// (mode 0777)", "<shown>: cannot create (Read-only file system)".
Result<UniqueFd> open_own_directory(int parent, const std::string& name, const std::string& shown);

// A file of trainvisor's own in such a directory, for appending: O_CREAT | O_APPEND | O_NOFOLLOW |
// O_NONBLOCK, and the opened descriptor must be a regular file with no other hard link. -1 with
// `why` set otherwise.
int open_own_append_file(int dir, const std::string& name, std::string* why);

}  // namespace tv
