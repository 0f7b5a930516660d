#include "launcher/workers/stack_dump.h"

#include "common/parse_number.h"

namespace tv {
namespace {

constexpr std::string_view kHeader = "# trainvisor stacks: pid ";
constexpr std::string_view kMainThread = " main thread ";

std::string_view line_at(std::string_view text, std::size_t pos) {
  const auto end = text.find('\n', pos);
  return text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

struct Frame {
  std::string_view file, line, function;
  std::string text() const {
    std::string out(function);
    out += " (";
    out += file;
    out += ":";
    out += line;
    out += ")";
    return out;
  }
};

// `  File "/x/train.py", line 5 in step` -> {"/x/train.py", "5", "step"}
std::optional<Frame> parse_frame(std::string_view line) {
  constexpr std::string_view kFile = "  File \"";
  if (!line.starts_with(kFile)) return std::nullopt;
  line.remove_prefix(kFile.size());
  const auto quote = line.rfind("\", line ");
  if (quote == std::string_view::npos) return std::nullopt;
  const std::string_view rest = line.substr(quote + 8);
  const auto in = rest.find(" in ");
  if (in == std::string_view::npos) return std::nullopt;
  return Frame{line.substr(0, quote), rest.substr(0, in), rest.substr(in + 4)};
}

// Where the frames of `thread`'s last appearance in `text` begin; npos when it is not there.
std::size_t thread_frames(std::string_view text, const std::string& thread) {
  // The thread's last appearance: "Current thread" when it took the signal, else "Thread".
  std::size_t best = std::string_view::npos, best_len = 0;
  for (const std::string_view prefix : {"Current thread ", "Thread "}) {
    const std::string head = std::string(prefix) + thread + " (most recent call first):\n";
    const auto pos = text.rfind(head);
    if (pos == std::string_view::npos || (pos != 0 && text[pos - 1] != '\n')) continue;
    if (best == std::string_view::npos || pos > best) best = pos, best_len = head.size();
  }
  return best == std::string_view::npos ? best : best + best_len;
}

// `.../lib/python3.11/x.py` but not `.../lib/python3.11/site-packages/...` (tested by the caller).
bool interpreter_library(std::string_view file) {
  for (auto at = file.find("/lib/python3"); at != std::string_view::npos;
       at = file.find("/lib/python3", at + 1)) {
    std::string_view rest = file.substr(at + 12);
    if (rest.starts_with(".")) rest.remove_prefix(1);
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') rest.remove_prefix(1);
    if (rest.starts_with("/")) return true;
  }
  return false;
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
  const std::size_t at = thread_frames(text, thread);
  if (at == std::string_view::npos) return std::nullopt;
  const auto frame = parse_frame(line_at(text, at));
  if (!frame) return std::nullopt;
  return frame->text();
}

bool library_file(std::string_view file) {
  return file.starts_with("<") || file.find("/site-packages/") != std::string_view::npos ||
         file.find("/dist-packages/") != std::string_view::npos ||
         file.find("/.trainvisor/python/") != std::string_view::npos || interpreter_library(file);
}

std::optional<std::string> innermost_user_frame(std::string_view text, const std::string& thread) {
  std::size_t at = thread_frames(text, thread);
  if (at == std::string_view::npos) return std::nullopt;
  // The thread's frames are the `  File` lines that follow its header, innermost first.
  for (; at < text.size(); at = text.find('\n', at) + 1) {
    const auto frame = parse_frame(line_at(text, at));
    if (!frame) return std::nullopt;
    if (!library_file(frame->file)) return frame->text();
    if (text.find('\n', at) == std::string_view::npos) break;
  }
  return std::nullopt;
}

}  // namespace tv
