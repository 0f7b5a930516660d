// libFuzzer: the zip end-record parser on arbitrary tails; any accepted record must be
// self-consistent (central directory before the record, inside the file).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "checkpoint/zip_end_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) return 0;
  const std::uint64_t extra = data[0] | (data[1] << 8);  // the tail may start inside the file
  const std::string_view tail(reinterpret_cast<const char*>(data) + 2, size - 2);
  auto r = tv::parse_zip_end_record(tail, tail.size() + extra);
  if (r.ok()) {
    if (r->central_directory_offset > r->record_offset) std::abort();
    if (r->central_directory_size > r->record_offset - r->central_directory_offset) std::abort();
    if (r->record_offset >= tail.size() + extra) std::abort();
  }
  return 0;
}
