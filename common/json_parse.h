// Parsing JSON that someone else wrote (a resource config, a `render` job file, a worker's error
// file, a peer's message, hyperparameters). nlohmann's parser itself is iterative, but dump() and
// every walk over the value recurse, so 100,000 levels of `[[[...]]]` crash whatever touches the
// value (SIGSEGV). The nesting is bounded while parsing (nlohmann's parser callback sees each
// level's depth): anything deeper than max_depth is refused, never built.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tv {

inline constexpr int kMaxJsonDepth = 64;

// The value, or an Error (exit code 78) whose message is the reason only, for the caller to put
// after the file's name: "nested deeper than 64 levels" or nlohmann's parse error text.
Result<nlohmann::json> parse_json(std::string_view text, int max_depth = kMaxJsonDepth);

// As parse_json, but a value that is not valid or too deep is nlohmann's discarded value
// (is_discarded()), like json::parse(text, nullptr, false).
nlohmann::json parse_json_or_discarded(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace tv
