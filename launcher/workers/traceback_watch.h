// TracebackWatch: the last Python traceback in a worker's stderr, fed one line at a time. Pure.
// A worker without torch's @record leaves no error file; its traceback on stderr then names the
// root cause, whatever it printed on stdout around it and whichever pipe trainvisor read last
// (root_cause.h: the error file, else this, else the last output line).
//
// What counts, as CPython prints it:
//   Traceback (most recent call last):      the header (after any prefix such as "ERROR: ")
//     File "/x/train.py", line 3, in <module>   indented lines: the frames
//   RuntimeError: NCCL error                the first line that is not indented: the exception
// also a SyntaxError of the main script, which has no header (`  File "...", line N` first), and
// an exception group (`  + Exception Group Traceback ...`, its body behind `  | `), whose own
// exception line is kept, not its sub-exceptions'. A traceback cut off before its exception line
// (a SIGKILL while it was written) is not one: the previous one stands.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tv {

class TracebackWatch {
 public:
  static constexpr std::size_t kMaxLines = 64;  // the header and the last 63 lines after it

  void line(std::string_view text) {
    if (skip_group_) {
      if (indented(text)) return;
      skip_group_ = false;
    }
    if (open_) return body(text);
    const std::size_t at = text.find(kHeader);
    if (at != std::string_view::npos) {
      prefix_ = std::string(text.substr(0, at));
      group_ = prefix_.ends_with("Exception Group ");
      return start(text);
    }
    if (text.starts_with("  File \"")) {  // a SyntaxError's report: no header
      prefix_.clear();
      group_ = false;
      start(text);
    }
  }

  // The last complete traceback, its exception line last; empty when there was none.
  const std::vector<std::string>& last() const { return last_; }
  // Its exception line ("RuntimeError: NCCL error"); empty when there was none.
  std::string exception() const { return last_.empty() ? std::string() : last_.back(); }

 private:
  static constexpr std::string_view kHeader = "Traceback (most recent call last):";

  static bool indented(std::string_view s) { return !s.empty() && (s[0] == ' ' || s[0] == '\t'); }

  void start(std::string_view text) {
    open_ = true;
    current_.assign(1, std::string(text));
  }

  void body(std::string_view text) {
    if (group_) {
      // "  | ExceptionGroup: two (2 sub-exceptions)" ends the group's own frames.
      if (!text.starts_with("  | ")) return abandon();
      const std::string_view inner = text.substr(4);
      if (indented(inner)) return keep(text);
      skip_group_ = true;  // the sub-exceptions' tracebacks that follow are the group's body
      return finish(std::string(inner));
    }
    if (!prefix_.empty() && !indented(prefix_) && text.starts_with(prefix_))
      text.remove_prefix(prefix_.size());
    if (text.empty()) return abandon();  // CPython prints no empty line inside a traceback
    if (indented(text)) return keep(text);
    finish(std::string(text));
  }

  void keep(std::string_view text) {
    if (current_.size() == kMaxLines) current_.erase(current_.begin() + 1);
    current_.emplace_back(text);
  }

  void finish(std::string exception) {
    keep(exception);
    last_ = std::move(current_);
    current_.clear();
    open_ = false;
  }

  void abandon() {
    current_.clear();
    open_ = false;
  }

  bool open_ = false;
  bool group_ = false;
  bool skip_group_ = false;
  std::string prefix_;
  std::vector<std::string> current_, last_;
};

// The exception line of the last complete traceback in `text`, a log file's tail (a worker's
// stderr.log: EvidenceFiles, the job's ledger); "" when there is none. `first_line_cut`: the tail
// begins inside a line, which is skipped. A line holding a NUL byte (binary output) is no part of
// a traceback; a trailing '\r' is dropped.
inline std::string last_exception(std::string_view text, bool first_line_cut) {
  TracebackWatch w;
  bool first = true;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (std::exchange(first, false) && first_line_cut) continue;
    if (line.ends_with('\r')) line.remove_suffix(1);
    w.line(line.find('\0') == std::string_view::npos ? line : std::string_view());
  }
  return w.exception();
}

}  // namespace tv
