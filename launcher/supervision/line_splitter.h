// Splits a byte stream into lines. Pure; used per worker stream by the output forwarding.
// A line longer than max_line is emitted in max_line pieces so one runaway writer cannot make
// the launcher buffer without bound.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tv {

class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line = 64 * 1024) : max_line_(max_line) {}

  // Calls on_line(std::string_view) for every complete line (without its '\n').
  template <class F>
  void feed(std::string_view data, F&& on_line) {
    while (!data.empty()) {
      auto nl = data.find('\n');
      std::size_t take = nl == std::string_view::npos ? data.size() : nl;
      std::size_t room = max_line_ - partial_.size();
      if (take > room) {
        partial_.append(data.substr(0, room));
        on_line(std::string_view(partial_));
        partial_.clear();
        data.remove_prefix(room);
        continue;
      }
      partial_.append(data.substr(0, take));
      if (nl == std::string_view::npos) return;
      on_line(std::string_view(partial_));
      partial_.clear();
      data.remove_prefix(take + 1);
    }
  }

  // End of stream: emits a last line that had no '\n'.
  template <class F>
  void finish(F&& on_line) {
    if (!partial_.empty()) on_line(std::string_view(partial_));
    partial_.clear();
  }

 private:
  std::size_t max_line_;
  std::string partial_;
};

}  // namespace tv
