// What checkpoint and run names say, parsed without allocating: steps in the naming schemes of
// the frameworks (docs/checkpoints.md cites each) and the time stamps runs are named with.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tv {

// All ASCII digits, 1..18 of them (fits an int64): the value, else nullopt.
std::optional<std::int64_t> parse_digits(std::string_view s);
// `prefix` + digits + `suffix` exactly: the digits' value.
std::optional<std::int64_t> number_between(std::string_view name, std::string_view prefix,
                                           std::string_view suffix);
// The last run of digits in a name ("iter_000001000" -> 1000), or -1.
std::int64_t step_in_name(std::string_view name);
// The number after `key` ("step=" in "epoch=3-step=1200.ckpt" -> 1200), or -1.
std::int64_t number_after(std::string_view name, std::string_view key);

// Nanoseconds since 1970 (the stamp read as UTC) when the name starts with a run time stamp:
//   %Y-%m-%d_%H-%M-%S      Isaac Lab (skrl, rsl_rl, rl_games run directories)
//   %y-%m-%d_%H-%M-%S-%f   plain skrl (2-digit year, microseconds)
//   %Y%m%d%H%M%S           cosmos-rl output directories (the whole name)
std::optional<std::int64_t> run_stamp_ns(std::string_view name);

}  // namespace tv
