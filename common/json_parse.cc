#include "common/json_parse.h"

#include "common/exit_codes.h"

namespace tv {

Result<nlohmann::json> parse_json(std::string_view text, int max_depth) {
  using nlohmann::json;
  bool too_deep = false;
  const json::parser_callback_t bound = [&](int depth, json::parse_event_t event, json&) {
    const bool opens =
        event == json::parse_event_t::object_start || event == json::parse_event_t::array_start;
    if (opens && depth >= max_depth) too_deep = true;
    return !too_deep;  // false: the value is dropped, not built
  };
  json j;
  try {
    j = json::parse(text, bound);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e99999
    return Error{ErrorKind::kConfig, e.what()};
  }
  if (too_deep)
    return Error{ErrorKind::kConfig, "nested deeper than " + std::to_string(max_depth) + " levels"};
  return j;
}

nlohmann::json parse_json_or_discarded(std::string_view text, int max_depth) {
  auto j = parse_json(text, max_depth);
  if (!j) return nlohmann::json(nlohmann::json::value_t::discarded);
  return std::move(*j);
}

}  // namespace tv
