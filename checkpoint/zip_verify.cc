#include "checkpoint/zip_verify.h"

#include <zlib.h>

#include <algorithm>

#include "checkpoint/little_endian.h"
#include "checkpoint/zip_end_record.h"
#include "common/exit_codes.h"

namespace tv {
namespace {

constexpr std::uint32_t kCentralSignature = 0x02014b50;
constexpr std::uint32_t kLocalSignature = 0x04034b50;
constexpr std::size_t kCentralSize = 46;
constexpr std::size_t kLocalSize = 30;
constexpr std::uint64_t kChunk = 1 << 20;

Error bad(std::string why) { return Error{ErrorKind::kFailed, std::move(why)}; }

struct Entry {
  std::string_view name;
  std::uint32_t crc = 0;
  std::uint16_t method = 0;
  std::uint16_t flags = 0;
  std::uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

// Applies the zip64 extra field (id 1) to the fields that were 0xFFFFFFFF.
bool apply_zip64(std::string_view extra, Entry& e) {
  for (std::size_t at = 0; at + 4 <= extra.size();) {
    const auto id = little_endian(extra, at, 2), len = little_endian(extra, at + 2, 2);
    if (at + 4 + len > extra.size()) return false;
    if (id == 1) {
      std::size_t p = at + 4;
      for (std::uint64_t* f : {&e.uncompressed, &e.compressed, &e.local_offset}) {
        if (*f != 0xFFFFFFFF) continue;
        if (p + 8 > at + 4 + len) return false;
        *f = little_endian(extra, p, 8);
        p += 8;
      }
      return true;
    }
    at += 4 + len;
  }
  return e.uncompressed != 0xFFFFFFFF && e.compressed != 0xFFFFFFFF && e.local_offset != 0xFFFFFFFF;
}

Result<Entry> central_entry(std::string_view cd, std::size_t& at) {
  if (cd.size() - at < kCentralSize || little_endian(cd, at, 4) != kCentralSignature)
    return bad("central directory entry at +" + std::to_string(at) + " is malformed");
  Entry e;
  e.flags = static_cast<std::uint16_t>(little_endian(cd, at + 8, 2));
  e.method = static_cast<std::uint16_t>(little_endian(cd, at + 10, 2));
  e.crc = static_cast<std::uint32_t>(little_endian(cd, at + 16, 4));
  e.compressed = little_endian(cd, at + 20, 4);
  e.uncompressed = little_endian(cd, at + 24, 4);
  const std::size_t name_len = little_endian(cd, at + 28, 2),
                    extra_len = little_endian(cd, at + 30, 2),
                    comment_len = little_endian(cd, at + 32, 2);
  e.local_offset = little_endian(cd, at + 42, 4);
  const std::size_t total = kCentralSize + name_len + extra_len + comment_len;
  if (cd.size() - at < total) return bad("central directory entry runs past its end");
  e.name = cd.substr(at + kCentralSize, name_len);
  if (!apply_zip64(cd.substr(at + kCentralSize + name_len, extra_len), e))
    return bad("bad zip64 extra field for " + std::string(e.name));
  at += total;
  return e;
}

Result<std::uint32_t> crc_of(CheckpointFs& fs, const std::string& path, std::uint64_t offset,
                             std::uint64_t length) {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  while (length > 0) {
    const std::uint64_t n = std::min(length, kChunk);
    auto piece = fs.read_range(path, offset, n);
    if (!piece) return piece.error();
    if (piece->size() != n) return bad("file shrank while being read");
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(piece->data()), static_cast<uInt>(n));
    offset += n;
    length -= n;
  }
  return static_cast<std::uint32_t>(crc);
}

Status check_entry(CheckpointFs& fs, const std::string& path, const Entry& e,
                   std::uint64_t cd_offset, bool hash, ZipVerifyStats& stats) {
  const std::string name(e.name);
  if (e.local_offset > cd_offset || cd_offset - e.local_offset < kLocalSize)
    return bad("entry " + name + ": local header offset " + std::to_string(e.local_offset) +
               " is not before the central directory");
  auto head = fs.read_range(path, e.local_offset, kLocalSize + e.name.size());
  if (!head) return head.error();
  if (head->size() != kLocalSize + e.name.size() || little_endian(*head, 0, 4) != kLocalSignature)
    return bad("entry " + name + ": no local header at " + std::to_string(e.local_offset));
  if (std::string_view(*head).substr(kLocalSize) != e.name)
    return bad("entry " + name + ": local header names another file");
  const bool descriptor = (e.flags & 8) != 0;
  const std::uint64_t lcrc = little_endian(*head, 14, 4), lcomp = little_endian(*head, 18, 4),
                      luncomp = little_endian(*head, 22, 4);
  if (!descriptor && lcrc != e.crc) return bad("entry " + name + ": local CRC differs");
  if (!descriptor && lcomp != 0xFFFFFFFF && (lcomp != e.compressed || luncomp != e.uncompressed))
    return bad("entry " + name + ": local sizes differ from the central directory");
  const std::uint64_t data =
      e.local_offset + kLocalSize + e.name.size() + little_endian(*head, 28, 2);
  if (data > cd_offset || e.compressed > cd_offset - data)
    return bad("entry " + name + ": data runs into the central directory");
  if (e.method != 0 || !hash) return ok_status();  // deflated: bounds only
  if (e.compressed != e.uncompressed) return bad("entry " + name + ": stored sizes differ");
  auto crc = crc_of(fs, path, data, e.compressed);
  if (!crc) return crc.error();
  if (*crc != e.crc) return bad("entry " + name + ": CRC-32 mismatch (data not fully written?)");
  stats.bytes_hashed += e.compressed;
  return ok_status();
}

}  // namespace

Result<ZipVerifyStats> verify_zip(CheckpointFs& fs, const std::string& path, std::uint64_t size,
                                  bool hash_data) {
  const std::uint64_t n = std::min<std::uint64_t>(size, kZipTailBytes);
  auto tail = fs.read_range(path, size - n, n);
  if (!tail) return tail.error();
  auto rec = parse_zip_end_record(*tail, size);
  if (!rec) return rec.error();
  if (rec->central_directory_size > kMaxCentralDirectoryBytes)
    return bad("central directory of " + std::to_string(rec->central_directory_size) +
               " bytes is larger than the limit");
  auto cd = fs.read_range(path, rec->central_directory_offset, rec->central_directory_size);
  if (!cd) return cd.error();
  if (cd->size() != rec->central_directory_size) return bad("central directory cut off");
  ZipVerifyStats stats;
  for (std::size_t at = 0; at < cd->size();) {
    auto e = central_entry(*cd, at);
    if (!e) return e.error();
    if (auto ok = check_entry(fs, path, *e, rec->central_directory_offset, hash_data, stats); !ok)
      return ok.error();
    ++stats.entries;
  }
  if (stats.entries != rec->entries)
    return bad("central directory holds " + std::to_string(stats.entries) +
               " entries, the end "
               "record says " +
               std::to_string(rec->entries));
  return stats;
}

}  // namespace tv

namespace tv {

Result<std::string> read_stored_entry(CheckpointFs& fs, const std::string& path,
                                      std::string_view suffix, std::uint64_t limit) {
  auto st = fs.stat(path);
  if (!st) return st.error();
  const std::uint64_t n = std::min<std::uint64_t>(st->size, kZipTailBytes);
  auto tail = fs.read_range(path, st->size - n, n);
  if (!tail) return tail.error();
  auto rec = parse_zip_end_record(*tail, st->size);
  if (!rec) return rec.error();
  if (rec->central_directory_size > kMaxCentralDirectoryBytes)
    return bad("central directory too large");
  auto cd = fs.read_range(path, rec->central_directory_offset, rec->central_directory_size);
  if (!cd) return cd.error();
  if (cd->size() != rec->central_directory_size) return bad("central directory cut off");
  for (std::size_t at = 0; at < cd->size();) {
    auto e = central_entry(*cd, at);
    if (!e) return e.error();
    if (!e->name.ends_with(suffix)) continue;
    if (e->method != 0) return bad(std::string(e->name) + " is compressed");
    if (e->compressed > limit) return bad(std::string(e->name) + " is too large");
    auto head = fs.read_range(path, e->local_offset, kLocalSize);
    if (!head) return head.error();
    if (head->size() != kLocalSize || little_endian(*head, 0, 4) != kLocalSignature)
      return bad("no local header for " + std::string(e->name));
    const std::uint64_t data =
        e->local_offset + kLocalSize + little_endian(*head, 26, 2) + little_endian(*head, 28, 2);
    auto bytes = fs.read_range(path, data, e->compressed);
    if (!bytes) return bytes.error();
    if (bytes->size() != e->compressed) return bad(std::string(e->name) + " cut off");
    return std::move(*bytes);
  }
  return bad("no entry ending with " + std::string(suffix));
}

}  // namespace tv
