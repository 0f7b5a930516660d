// Progress read from the workers' own output, with no change to the training script.
//
// `--progress-regex RE` is one Perl-syntax regular expression (Boost.Regex) with a named group
// `(?<step>\d+)` and optionally `(?<total>\d+)`, e.g. `Learning iteration
// (?<step>\d+)/(?<total>\d+)`.
// `--progress-regex auto` tries the built-in patterns of the trainers our users run (rsl_rl,
// skrl and HF Trainer through their tqdm bars, Cosmos' imaginaire trainer); docs/observability.md
// cites the line in each framework's source that each pattern was checked against.
//
// The output is cut into segments at '\n' and at '\r' (tqdm redraws its bar with '\r' and no
// newline), by ProgressTap, one per worker stream. Parsers never throw; a number that does not fit
// in 63 bits is ignored. Thread-compatible, no I/O.
#pragma once

#include <boost/regex.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tv {

struct Progress {
  std::int64_t step = 0;
  std::optional<std::int64_t> total;
  // Achieved TFLOP/s per GPU as the framework prints it, from a `(?<tflops>[0-9.]+)` group.
  std::optional<double> tflops = std::nullopt;
};

struct BuiltinProgressPattern {
  std::string framework;  // "rsl_rl", "tqdm (skrl, HF Trainer)", "cosmos"
  std::string regex;
};

// The patterns `auto` tries, in order.
const std::vector<BuiltinProgressPattern>& builtin_progress_patterns();

class ProgressParser {
 public:
  // `spec` is "auto" or one regex; `origin` names the flag or variable for the error (exit 78):
  // a regex that does not compile, or one without a `step` group.
  static Result<ProgressParser> make(const std::string& spec, const std::string& origin);
  std::optional<Progress> parse(std::string_view segment) const;
  // A pattern has a `tflops` group: the framework's own FLOP rate, for MFU.
  bool has_tflops() const;

 private:
  struct Pattern {
    boost::regex re;
    int step = -1;    // sub-expression index of the `step` group
    int total = -1;   // of `total`, -1 when the pattern has none
    int tflops = -1;  // of `tflops`, -1 when the pattern has none
  };
  static Result<Pattern> compile(const std::string& regex, const std::string& origin);
  std::vector<Pattern> patterns_;
};

// Cuts one worker stream into segments and hands each segment's progress to `sink`. Keeps at most
// kMaxSegment bytes of an unfinished segment (the tail: a tqdm bar ends a long run of redraws).
class ProgressTap {
 public:
  static constexpr std::size_t kMaxSegment = 4096;
  ProgressTap(const ProgressParser& parser, std::function<void(const Progress&)> sink)
      : parser_(parser), sink_(std::move(sink)) {}
  void feed(std::string_view bytes);
  void finish();  // end of stream: the last segment without a terminator

 private:
  void emit();
  const ProgressParser& parser_;
  std::function<void(const Progress&)> sink_;
  std::string partial_;
};

}  // namespace tv
