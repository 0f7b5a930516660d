#include "checkpoint/names.h"

#include <array>

namespace tv {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// `shape`: 'd' = a digit, anything else = that character.
bool has_shape(std::string_view s, std::string_view shape) {
  if (s.size() < shape.size()) return false;
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 'd' ? !is_digit(s[i]) : s[i] != shape[i]) return false;
  return true;
}

int num(std::string_view s, std::size_t at, std::size_t n) {
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v * 10 + (s[at + i] - '0');
  return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era) * 146097 + doe - 719468;
}

std::optional<std::int64_t> stamp(int y, int mo, int d, int h, int mi, int s, int us) {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  const std::int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  return secs * 1'000'000'000 + static_cast<std::int64_t>(us) * 1000;
}

}  // namespace

std::optional<std::int64_t> number_between(std::string_view name, std::string_view prefix,
                                           std::string_view suffix) {
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
      !name.ends_with(suffix))
    return std::nullopt;
  return parse_digits(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()));
}

std::int64_t step_in_name(std::string_view name) {
  // Lightning/NeMo names say which number is the step: "step=100-consumed_samples=800.0".
  if (const std::int64_t named = number_after(name, "step="); named >= 0) return named;
  std::size_t end = name.size();
  while (end > 0 && !is_digit(name[end - 1])) --end;
  if (end == 0) return -1;
  std::size_t begin = end;
  while (begin > 0 && is_digit(name[begin - 1])) --begin;
  if (end - begin > 18) begin = end - 18;
  return *parse_digits(name.substr(begin, end - begin));
}

std::int64_t number_after(std::string_view name, std::string_view key) {
  const auto at = name.find(key);
  if (at == std::string_view::npos) return -1;
  std::size_t begin = at + key.size(), end = begin;
  while (end < name.size() && is_digit(name[end])) ++end;
  auto v = parse_digits(name.substr(begin, end - begin));
  return v ? *v : -1;
}

namespace {

constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// The stamp that starts exactly at n (n begins at a digit or month name, not after a digit).
std::optional<std::int64_t> stamp_at(std::string_view n) {
  if (has_shape(n, "dddd-dd-dd_dd-dd-dd"))
    return stamp(num(n, 0, 4), num(n, 5, 2), num(n, 8, 2), num(n, 11, 2), num(n, 14, 2),
                 num(n, 17, 2), 0);
  if (has_shape(n, "dd-dd-dd_dd-dd-dd-dddddd"))
    return stamp(2000 + num(n, 0, 2), num(n, 3, 2), num(n, 6, 2), num(n, 9, 2), num(n, 12, 2),
                 num(n, 15, 2), num(n, 18, 6));
  if (has_shape(n, "dddddddd_dddddd") && (n.size() == 15 || !is_digit(n[15])))
    return stamp(num(n, 0, 4), num(n, 4, 2), num(n, 6, 2), num(n, 9, 2), num(n, 11, 2),
                 num(n, 13, 2), 0);
  if (has_shape(n, "dddddddd-dddddd") && (n.size() == 15 || !is_digit(n[15])))
    return stamp(num(n, 0, 4), num(n, 4, 2), num(n, 6, 2), num(n, 9, 2), num(n, 11, 2),
                 num(n, 13, 2), 0);
  if (has_shape(n, "dddddddddddddd") && (n.size() == 14 || !is_digit(n[14])))
    return stamp(num(n, 0, 4), num(n, 4, 2), num(n, 6, 2), num(n, 8, 2), num(n, 10, 2),
                 num(n, 12, 2), 0);
  // legged_gym %b%d_%H-%M-%S (no year: read as 2000, a leap year, so Feb29 parses)
  for (int m = 0; m < 12; ++m)
    if (n.starts_with(kMonths[m]) && has_shape(n.substr(3), "dd_dd-dd-dd"))
      return stamp(2000, m + 1, num(n, 3, 2), num(n, 6, 2), num(n, 9, 2), num(n, 12, 2), 0);
  return std::nullopt;
}

}  // namespace

std::optional<std::int64_t> run_stamp_ns(std::string_view n) {
  for (std::size_t at = 0; at < n.size(); ++at) {
    if (at > 0 && is_digit(n[at - 1])) continue;  // a stamp starts a run of digits
    if (!is_digit(n[at]) && !(n[at] >= 'A' && n[at] <= 'S')) continue;
    if (auto ns = stamp_at(n.substr(at))) return ns;
  }
  return std::nullopt;
}

}  // namespace tv
