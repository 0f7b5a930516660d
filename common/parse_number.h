// Number parsing for every parser of a whole text that is a number (options, environment
// variables, /proc names, files): std::from_chars with a range, never an exception, never a wrap.
// The whole text must be the number (no sign for unsigned types, no spaces, no leading '+');
// anything else, or a value outside [min, max], is nullopt. Scanners that read a number inside a
// longer text do it themselves: Slurm's "2(x3)" (launcher/topology/topology_slurm.cc), the hex
// bytes of an NCCL unique id (health/nccl_api.cc), the seconds of a checkpoint glob rule
// (checkpoint/integrity.cc, checkpoint/glob_candidates.cc).
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <system_error>

namespace tv {

template <class T>
std::optional<T> parse_integer(std::string_view text, T min, T max) {
  T out{};
  const char* b = text.data();
  const char* e = b + text.size();
  auto [p, ec] = std::from_chars(b, e, out);
  if (text.empty() || ec != std::errc() || p != e || out < min || out > max) return std::nullopt;
  return out;
}

// A finite decimal number in [min, max]: "inf", "nan", "1e400" and "-1" (when min is 0) are
// nullopt.
inline std::optional<double> parse_finite(std::string_view text, double min, double max) {
  double out = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto [p, ec] = std::from_chars(b, e, out, std::chars_format::general);
  if (text.empty() || ec != std::errc() || p != e || !std::isfinite(out) || out < min || out > max)
    return std::nullopt;
  return out;
}

}  // namespace tv
