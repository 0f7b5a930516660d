// What checkpoint and run names say, parsed without allocating: steps in the naming schemes of
// the frameworks (docs/checkpoints.md cites each) and the time stamps runs are named with.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tv {

// All ASCII digits, 1..18 of them (fits an int64): the value, else nullopt. Inline: it runs
// for every file of a directory of 100,000 checkpoints.
inline std::optional<std::int64_t> parse_digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::int64_t v = 0;
  for (const char c : s) {
    const auto d = static_cast<unsigned char>(c - '0');
    if (d > 9) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}
// `prefix` + digits + `suffix` exactly: the digits' value.
std::optional<std::int64_t> number_between(std::string_view name, std::string_view prefix,
                                           std::string_view suffix);
// The step a name holds: the number after "step=" when there is one (Lightning, NeMo:
// "step=100-consumed_samples=800.0" -> 100), else the last run of digits ("iter_000001000" ->
// 1000), or -1.
std::int64_t step_in_name(std::string_view name);
// The number after `key` ("step=" in "epoch=3-step=1200.ckpt" -> 1200), or -1.
std::int64_t number_after(std::string_view name, std::string_view key);

// fairseq's saves in one order: epoch E, then updates U within it; the end of the epoch
// (checkpoint<E>.pt, u = -1) after its updates. -1 when out of range.
inline constexpr std::int64_t kFairseqUpdates = std::int64_t{1} << 40;
inline std::int64_t fairseq_step(std::int64_t e, std::int64_t u) {
  if (e >= (std::int64_t{1} << 22) || u >= kFairseqUpdates - 1) return -1;
  return e * kFairseqUpdates + (u < 0 ? kFairseqUpdates - 1 : u);
}
// The updates of that order (the step reported), -1 for an end-of-epoch save.
inline std::int64_t fairseq_updates(std::int64_t step) {
  if (step < 0) return -1;
  const std::int64_t u = step % kFairseqUpdates;
  return u == kFairseqUpdates - 1 ? -1 : u;
}

// skrl's one-file-per-save names: agent_<t>.pt, agent_<t>.pickle, best_agent.pt/.pickle.
inline bool skrl_agent_file(std::string_view n) {
  const auto dot = n.rfind('.');
  if (dot == std::string_view::npos) return false;
  const auto ext = n.substr(dot);
  if (ext != ".pt" && ext != ".pickle") return false;
  const auto stem = n.substr(0, dot);
  return stem == "best_agent" || (stem.starts_with("agent_") && parse_digits(stem.substr(6)));
}

// skrl module names are Python identifiers (keys of Agent.checkpoint_modules), after a
// multi-agent uid that may also hold '-' (PettingZoo agent names).
inline bool is_module_name(std::string_view m) {
  if (m.empty()) return false;
  for (const char c : m)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}

// Nanoseconds since 1970 (the stamp read as UTC) of the first run time stamp anywhere in the name
// (at its start, its end or between; a stamp never starts right after a digit):
//   %Y-%m-%d_%H-%M-%S      Isaac Lab (skrl, rsl_rl, rl_games run directories), NeMo versions
//   %y-%m-%d_%H-%M-%S-%f   plain skrl (2-digit year, microseconds)
//   %Y%m%d%H%M%S           cosmos-rl output directories (14 digits, no digit after them)
//   %Y%m%d_%H%M%S          names that end in a time stamp (cosmos-predict2.5 job names)
//   %Y%m%d-%H%M%S          ms-swift v<N>-<stamp> run directories, timm <stamp>-<model>-<size>
//   %b%d_%H-%M-%S          legged_gym (no year: read as the year 2000)
std::optional<std::int64_t> run_stamp_ns(std::string_view name);

}  // namespace tv
