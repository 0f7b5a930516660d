// Splits a byte stream into lines. Pure; used per worker stream by the output forwarding.
// A line longer than max_line is emitted in max_line pieces so one runaway writer cannot make
// the launcher buffer without bound. A callback that takes (std::string_view, bool) also learns
// whether the piece continues a line whose earlier piece was cut there (the console marks it);
// one that takes the view alone gets the pieces as lines.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace tv {

class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line = 64 * 1024) : max_line_(max_line) {}

  // Calls on_line for every complete line (without its '\n') and every max_line piece.
  template <class F>
  void feed(std::string_view data, F&& on_line) {
    while (!data.empty()) {
      auto nl = data.find('\n');
      std::size_t take = nl == std::string_view::npos ? data.size() : nl;
      std::size_t room = max_line_ - partial_.size();
      if (take > room) {
        partial_.append(data.substr(0, room));
        emit(on_line, true);
        data.remove_prefix(room);
        continue;
      }
      partial_.append(data.substr(0, take));
      if (nl == std::string_view::npos) return;
      emit(on_line, false);
      data.remove_prefix(take + 1);
    }
  }

  // End of stream: emits a last line that had no '\n'.
  template <class F>
  void finish(F&& on_line) {
    if (!partial_.empty()) emit(on_line, false);
    partial_.clear();
    continuing_ = false;
  }

 private:
  // `cut`: the line goes on in the next piece.
  template <class F>
  void emit(F& on_line, bool cut) {
    if constexpr (std::is_invocable_v<F&, std::string_view, bool>)
      on_line(std::string_view(partial_), continuing_);
    else
      on_line(std::string_view(partial_));
    partial_.clear();
    continuing_ = cut;
  }

  std::size_t max_line_;
  std::string partial_;
  bool continuing_ = false;  // the next piece continues a cut line
};

}  // namespace tv
