// The zip end-of-central-directory record, the last thing a zip writer (PyTorch's torch.save,
// via miniz) writes. A .pt file whose end record is missing, misplaced or inconsistent was cut
// off mid-write. Pure parsing, no I/O; fuzzed by tests/fuzz/fuzz_zip_end_record.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tv {

struct ZipEndRecord {
  std::uint64_t entries = 0;
  std::uint64_t central_directory_offset = 0;
  std::uint64_t central_directory_size = 0;
  std::uint64_t record_offset = 0;  // where the (zip64, when present) end record starts
  bool zip64 = false;
};

// Bytes to read from the end of a file so that parse_zip_end_record sees the whole end record,
// a maximal comment and the zip64 locator and record before it.
inline constexpr std::uint64_t kZipTailBytes = 22 + 65535 + 20 + 56;

// `tail` is the last tail.size() bytes of a file of `file_size` bytes. The error says what is
// wrong, in words a log line can use ("no end-of-central-directory record ...").
Result<ZipEndRecord> parse_zip_end_record(std::string_view tail, std::uint64_t file_size);

// The signature a central directory starts with ("PK\1\2"), for a check at the offset above.
bool is_central_directory_header(std::string_view four_bytes);

}  // namespace tv
