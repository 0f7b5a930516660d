// Full check of a zip checkpoint (torch.save's format) against its own central directory: every
// entry's local header is where the directory says, with the same name and sizes, its data lies
// before the directory, and the CRC-32 of every stored (uncompressed) entry matches (zlib's
// crc32; torch.save stores everything uncompressed). Deflated entries are checked for bounds
// only. Catches what the end-record check cannot: a file whose tail was written before its body
// (parallel multipart downloads, some sync tools), e.g. a zero-filled body. Reads the whole file
// once, in 1 MiB pieces; docs/checkpoints.md has the cost.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/checkpoint_fs.h"
#include "common/result.h"

namespace tv {

struct ZipVerifyStats {
  std::uint64_t entries = 0;
  std::uint64_t bytes_hashed = 0;
};

// Largest central directory read (bigger: an error, not an allocation).
inline constexpr std::uint64_t kMaxCentralDirectoryBytes = 64ull << 20;

// `hash_data` false: the local headers and bounds only (one small read per entry, no CRC): what
// the watcher checks before it reports a checkpoint, to see a body not written yet.
Result<ZipVerifyStats> verify_zip(CheckpointFs& fs, const std::string& path, std::uint64_t size,
                                  bool hash_data = true);

}  // namespace tv

namespace tv {

// The bytes of the first stored entry whose name ends with `suffix` ("/data.pkl"), at most
// `limit` bytes. Errors: no such entry, compressed, larger than the limit, unreadable.
Result<std::string> read_stored_entry(CheckpointFs& fs, const std::string& path,
                                      std::string_view suffix, std::uint64_t limit);

}  // namespace tv
