#include "launcher/supervision/stack_dump.h"

#include "common/parse_number.h"

namespace tv {
namespace {

constexpr std::string_view kHeader = "# trainvisor stacks: pid ";
constexpr std::string_view kMainThread = " main thread ";

std::string_view line_at(std::string_view text, std::size_t pos) {
  const auto end = text.find('\n', pos);
  return text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

// `  File "/x/train.py", line 5 in step` -> "step (/x/train.py:5)"
std::optional<std::string> frame_text(std::string_view line) {
  constexpr std::string_view kFile = "  File \"";
  if (!line.starts_with(kFile)) return std::nullopt;
  line.remove_prefix(kFile.size());
  const auto quote = line.rfind("\", line ");
  if (quote == std::string_view::npos) return std::nullopt;
  const std::string_view file = line.substr(0, quote);
  std::string_view rest = line.substr(quote + 8);
  const auto in = rest.find(" in ");
  if (in == std::string_view::npos) return std::nullopt;
  return std::string(rest.substr(in + 4)) + " (" + std::string(file) + ":" +
         std::string(rest.substr(0, in)) + ")";
}

}  // namespace

std::optional<StacksHeader> last_stacks_header(std::string_view text) {
  std::size_t pos = text.rfind(kHeader);
  while (pos != std::string_view::npos && pos != 0 && text[pos - 1] != '\n')
    pos = pos == 0 ? std::string_view::npos : text.rfind(kHeader, pos - 1);
  if (pos == std::string_view::npos) return std::nullopt;
  const std::string_view line = line_at(text, pos + kHeader.size());
  const auto mid = line.find(kMainThread);
  if (mid == std::string_view::npos) return std::nullopt;
  const auto pid = parse_integer<long>(line.substr(0, mid), 1, 1L << 30);
  const std::string_view thread = line.substr(mid + kMainThread.size());
  if (!pid || !thread.starts_with("0x") || thread.size() < 3) return std::nullopt;
  return StacksHeader{*pid, std::string(thread)};
}

std::optional<std::string> innermost_frame(std::string_view text, const std::string& thread) {
  // The thread's last appearance: "Current thread" when it took the signal, else "Thread".
  std::size_t best = std::string_view::npos, best_len = 0;
  for (const std::string_view prefix : {"Current thread ", "Thread "}) {
    const std::string head = std::string(prefix) + thread + " (most recent call first):\n";
    const auto pos = text.rfind(head);
    if (pos == std::string_view::npos || (pos != 0 && text[pos - 1] != '\n')) continue;
    if (best == std::string_view::npos || pos > best) best = pos, best_len = head.size();
  }
  if (best == std::string_view::npos) return std::nullopt;
  return frame_text(line_at(text, best + best_len));
}

}  // namespace tv
