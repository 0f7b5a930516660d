// JSON to text for output. Invalid UTF-8 (a host name, a log line, a path from the environment)
// is replaced with U+FFFD instead of throwing: nlohmann's plain dump() throws on it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tv {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A value someone else wrote, for a message, never serialized whole (it may be megabytes, or
// deep): a scalar as JSON (ASCII, at most `max` characters), an empty object or list as {} or [],
// any other object or list by its size only.
inline std::string json_preview(const nlohmann::json& v, std::size_t max = 80) {
  if (v.is_object())
    return v.empty() ? "{}" : "an object of " + std::to_string(v.size()) + " fields";
  if (v.is_array()) return v.empty() ? "[]" : "a list of " + std::to_string(v.size()) + " items";
  const nlohmann::json head =
      v.is_string() ? nlohmann::json(v.get_ref<const std::string&>().substr(0, max)) : v;
  std::string s = head.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  return s.size() > max ? s.substr(0, max - 3) + "..." : s;
}

}  // namespace tv
