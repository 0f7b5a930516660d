// libFuzzer: torch's error-file JSON as a worker may write it. Parsing never throws; whatever the
// worker wrote, the root cause's summary is one line without control characters, and the detail
// text keeps no control character but newlines and tabs.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "launcher/job/root_cause.h"

namespace {

bool has_control(const std::string& s, bool allow_lines) {
  for (unsigned char c : s) {
    if (allow_lines && (c == '\n' || c == '\t')) continue;
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tv::FailureRecord f;
  f.exit_code = size % 256;
  f.error = tv::parse_error_file(text);
  f.tail = {text};
  if (has_control(tv::summary_line(f), false)) std::abort();
  if (has_control(tv::detail_text(f), true)) std::abort();
  (void)tv::format_failure_table({f});
  return 0;
}
