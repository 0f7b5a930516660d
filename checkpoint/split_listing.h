// Listing one large directory in parallel parts, where the file system's directory positions
// allow it; one sequential pass everywhere else.
//
// On ext4 a hashed directory's positions (lseek offsets, getdents64's d_off) are its names' hashes,
// 0 .. 2^63-1; readdir returns names in hash order, and an lseek to any position starts at the
// first name whose hash is at or after it (slices start at whole major hashes: split_listing.cc).
// So the positions split into slices that separate file descriptors read at once, each until the
// next name's position (the d_off of the last name read) reaches the next slice. The first name a
// slice reads lies beyond it when the slice holds no name; it is then the first name of the next
// slice that holds any, and is kept there only. An unhashed (linear) ext4 directory's positions are
// byte offsets below its size: the first slice reads it all, the others nothing. Other file
// systems' positions are not known to be ordered like this (NFS cookies, tmpfs before Linux 6.6),
// so they are listed in one pass.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/checkpoint_fs.h"
#include "common/result.h"

namespace tv {

// A directory smaller than this is listed in one pass (about 7,500 checkpoint names on ext4).
inline constexpr std::uint64_t kSplitBytes = 256 * 1024;
inline constexpr unsigned kMostParts = 8;

// How many parts a directory of `dir_bytes` is worth listing in on this machine: one per
// kSplitBytes, at most one per CPU this process may run on, at most kMostParts.
unsigned parts_for(std::uint64_t dir_bytes);

// Lists `dir` into `out` in up to `parts` parallel parts when it is on ext4, else in one; the
// number of parts it was listed in (a part whose thread cannot be started is read by the caller).
Result<unsigned> list_split(const std::string& dir, unsigned parts, std::uint64_t dir_bytes,
                            Listing& out);

}  // namespace tv
