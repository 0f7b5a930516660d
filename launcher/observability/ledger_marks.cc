#include "launcher/observability/ledger_marks.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "common/json_field.h"

namespace tv {

using nlohmann::json;

namespace {
json opt(const std::optional<std::int64_t>& v) { return v ? json(*v) : json(); }
std::optional<std::int64_t> opt_int(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  return j[key].get<std::int64_t>();
}
}  // namespace

json marks_json(const std::vector<PoisonMark>& marks) {
  json a = json::array();
  for (const auto& m : marks)
    a.push_back({{"path", m.path},
                 {"mtime_ns", m.mtime_ns},
                 {"step", opt(m.step)},
                 {"reason", m.reason},
                 {"marked_unix", m.marked_unix},
                 {"container", m.container}});
  return a;
}

std::vector<PoisonMark> read_marks(const json& j) {
  std::vector<PoisonMark> out;
  if (!j.is_array()) return out;
  for (const json& e : j) {
    PoisonMark m;
    m.path = json_field(e, "path", std::string());
    if (m.path.empty()) continue;
    m.mtime_ns = json_field(e, "mtime_ns", std::int64_t{0});
    m.step = opt_int(e, "step");
    m.reason = json_field(e, "reason", std::string());
    m.marked_unix = json_field(e, "marked_unix", 0.0);
    m.container = json_field(e, "container", 0);
    add_mark(out, std::move(m));
  }
  return out;
}

bool add_mark(std::vector<PoisonMark>& marks, PoisonMark m) {
  if (std::any_of(marks.begin(), marks.end(), [&](const PoisonMark& x) {
        return x.path == m.path && x.mtime_ns == m.mtime_ns;
      }))
    return false;
  marks.push_back(std::move(m));
  if (marks.size() > kLedgerMarks) marks.erase(marks.begin());
  return true;
}

json stop_save_json(const StopSaveRecord& s) {
  return {{"completed", s.completed},
          {"waited_seconds", s.waited_seconds},
          {"saved_step", opt(s.saved_step)},
          {"lost_steps", opt(s.lost_steps)},
          {"path", s.path}};
}

std::optional<StopSaveRecord> read_stop_save(const json& j) {
  if (!j.is_object()) return std::nullopt;
  StopSaveRecord s;
  s.completed = json_field(j, "completed", false);
  s.waited_seconds = json_field(j, "waited_seconds", 0.0);
  s.saved_step = opt_int(j, "saved_step");
  s.lost_steps = opt_int(j, "lost_steps");
  s.path = json_field(j, "path", std::string());
  return s;
}

std::string stop_save_line(const StopSaveRecord& s) {
  std::string steps;
  if (s.saved_step)
    steps = (s.completed ? "step " : "the newest before it: step ") + std::to_string(*s.saved_step);
  if (s.lost_steps) steps += (steps.empty() ? "" : ", ") + std::to_string(*s.lost_steps);
  if (s.lost_steps) steps += " steps lost";
  if (!steps.empty()) steps = " (" + steps + ")";
  if (s.completed)
    return fmt::format("save before the stop: completed in {:.2f} s{}", s.waited_seconds, steps);
  return fmt::format(
      "save before the stop: NOT completed in time (no complete checkpoint newer than the stop "
      "within {:.2f} s){}",
      s.waited_seconds, steps);
}

}  // namespace tv
