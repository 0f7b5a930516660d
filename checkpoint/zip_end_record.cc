#include "checkpoint/zip_end_record.h"

#include "checkpoint/little_endian.h"
#include "common/exit_codes.h"

namespace tv {
namespace {

constexpr std::uint32_t kEndSignature = 0x06054b50;
constexpr std::uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr std::uint32_t kZip64EndSignature = 0x06064b50;
constexpr std::size_t kEndSize = 22;
constexpr std::size_t kLocatorSize = 20;
constexpr std::size_t kZip64EndSize = 56;

Error bad(std::string why) { return Error{ErrorKind::kFailed, std::move(why)}; }

// Position of the end record inside `tail`: the last signature whose comment runs exactly to the
// end of the file. npos when there is none.
std::size_t find_end_record(std::string_view tail) {
  if (tail.size() < kEndSize) return std::string_view::npos;
  const std::size_t last = tail.size() - kEndSize;
  const std::size_t first = last > 65535 ? last - 65535 : 0;
  for (std::size_t pos = last + 1; pos-- > first;) {
    if (little_endian(tail, pos, 4) != kEndSignature) continue;
    if (little_endian(tail, pos + 20, 2) == tail.size() - pos - kEndSize) return pos;
  }
  return std::string_view::npos;
}

Result<ZipEndRecord> parse_zip64(std::string_view tail, std::size_t end_pos, std::uint64_t base) {
  if (end_pos < kLocatorSize ||
      little_endian(tail, end_pos - kLocatorSize, 4) != kZip64LocatorSignature)
    return bad("zip64 end record locator missing before the end record");
  const std::uint64_t record = little_endian(tail, end_pos - kLocatorSize + 8, 8);
  const std::size_t room = end_pos - kLocatorSize;  // bytes of the tail before the locator
  if (record < base || room < kZip64EndSize || record - base > room - kZip64EndSize)
    return bad("zip64 end record offset " + std::to_string(record) + " is outside the file tail");
  const std::size_t at = static_cast<std::size_t>(record - base);
  if (little_endian(tail, at, 4) != kZip64EndSignature)
    return bad("zip64 end record signature missing");
  ZipEndRecord r;
  r.zip64 = true;
  r.entries = little_endian(tail, at + 32, 8);
  r.central_directory_size = little_endian(tail, at + 40, 8);
  r.central_directory_offset = little_endian(tail, at + 48, 8);
  r.record_offset = record;
  return r;
}

}  // namespace

Result<ZipEndRecord> parse_zip_end_record(std::string_view tail, std::uint64_t file_size) {
  if (tail.size() > file_size) return bad("tail longer than the file");
  if (file_size < kEndSize) return bad("file too short for a zip end record (cut off?)");
  const std::size_t pos = find_end_record(tail);
  if (pos == std::string_view::npos)
    return bad("no end-of-central-directory record at the end (cut off mid-write?)");
  const std::uint64_t base = file_size - tail.size();
  ZipEndRecord r;
  r.entries = little_endian(tail, pos + 10, 2);
  r.central_directory_size = little_endian(tail, pos + 12, 4);
  r.central_directory_offset = little_endian(tail, pos + 16, 4);
  r.record_offset = base + pos;
  if (r.entries == 0xFFFF || r.central_directory_size == 0xFFFFFFFF ||
      r.central_directory_offset == 0xFFFFFFFF) {
    auto z = parse_zip64(tail, pos, base);
    if (!z) return z;
    r = *z;
  }
  if (r.central_directory_offset > r.record_offset ||
      r.central_directory_size > r.record_offset - r.central_directory_offset)
    return bad("central directory (offset " + std::to_string(r.central_directory_offset) +
               ", size " + std::to_string(r.central_directory_size) +
               ") overlaps the end record at " + std::to_string(r.record_offset));
  if (r.entries == 0) return bad("zip archive has no entries");
  return r;
}

bool is_central_directory_header(std::string_view four_bytes) {
  return four_bytes.size() == 4 && little_endian(four_bytes, 0, 4) == 0x02014b50;
}

}  // namespace tv
