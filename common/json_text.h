// JSON to text for output. Invalid UTF-8 (a host name, a log line, a path from the environment)
// is replaced with U+FFFD instead of throwing: nlohmann's plain dump() throws on it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tv {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tv
