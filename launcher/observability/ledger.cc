#include "launcher/observability/ledger.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "common/exit_codes.h"
#include "common/json_field.h"
#include "common/json_parse.h"
#include "common/json_text.h"

namespace tv {
namespace {

using nlohmann::json;

constexpr double kLargest = 1e15;  // seconds (31 million years), steps, Unix times

double sum(const std::array<double, kBadputCount>& a) {
  return std::accumulate(a.begin(), a.end(), 0.0);
}

std::size_t idx(Badput b) { return static_cast<std::size_t>(b); }

// The steps the previous container made after the point `c` started from are done again.
void account_boundary(JobTotals& t, const ContainerRecord& c) {
  if (t.last_step && c.start_step) {
    const std::int64_t steps = std::max<std::int64_t>(0, *t.last_step - *c.start_step);
    const double seconds =
        std::min(t.last_productive, static_cast<double>(steps) * t.seconds_per_step.value_or(0));
    t.productive -= seconds;
    t.badput[idx(Badput::kLostProgress)] += seconds;
    t.lost_steps += steps;
  } else if (t.last_productive > 0) {
    t.lost_progress_known = false;  // no step on one side: what was redone cannot be measured
  }
}

json opt(const std::optional<std::int64_t>& v) { return v ? json(*v) : json(); }
json opt(const std::optional<double>& v) { return v ? json(*v) : json(); }

json badput_json(const std::array<double, kBadputCount>& b) {
  json j = json::object();
  for (std::size_t i = 0; i < kBadputCount; ++i) j[badput_name(static_cast<Badput>(i))] = b[i];
  return j;
}

json record_json(const ContainerRecord& c) {
  json phases = json::object();
  for (std::size_t i = 0; i < kPhaseCount; ++i)
    phases[phase_name(static_cast<Phase>(i))] = c.phase_seconds[i];
  return {{"index", c.index},
          {"started_unix", c.started_unix},
          {"heartbeat_unix", c.heartbeat_unix},
          {"ended", c.ended},
          {"exit_code", c.exit_code ? json(*c.exit_code) : json()},
          {"phase_seconds", phases},
          {"badput_seconds", badput_json(c.badput)},
          {"productive_seconds", c.productive},
          {"start_step", opt(c.start_step)},
          {"last_step", opt(c.last_step)},
          {"seconds_per_step", opt(c.seconds_per_step)},
          {"longest_startup_seconds", opt(c.longest_startup)},
          {"longest_save_seconds", opt(c.longest_save)},
          {"lost_steps", c.lost_steps},
          {"restarts", c.restarts},
          {"progress_evidence", c.progress_evidence},
          {"lost_progress_known", c.lost_progress_known}};
}

json totals_json(const JobTotals& t) {
  return {{"containers", t.containers},
          {"first_started_unix", t.first_started_unix},
          {"last_heartbeat_unix", t.last_heartbeat_unix},
          {"productive_seconds", t.productive},
          {"badput_seconds", badput_json(t.badput)},
          {"outside_seconds", t.outside},
          {"lost_steps", t.lost_steps},
          {"restarts", t.restarts},
          {"progress_evidence", t.progress_evidence},
          {"lost_progress_known", t.lost_progress_known},
          {"last_step", opt(t.last_step)},
          {"seconds_per_step", opt(t.seconds_per_step)},
          {"longest_startup_seconds", opt(t.longest_startup)},
          {"longest_save_seconds", opt(t.longest_save)},
          {"last_productive_seconds", t.last_productive}};
}

// Strict reading: the first field that is missing or of the wrong type is the error.
class Reader {
 public:
  const std::string& error() const { return error_; }
  double number(const json& j, const std::string& key, const std::string& where) {
    auto it = find(j, key, where);
    // Bounded, so that no sum of them overflows (JSON would write an infinity as null).
    if (it && it->is_number() && std::abs(it->get<double>()) < kLargest) return it->get<double>();
    return fail(where + key, "a number below 1e15"), 0.0;
  }
  std::int64_t integer(const json& j, const std::string& key, const std::string& where) {
    auto it = find(j, key, where);
    if (it && it->is_number_integer() && std::abs(it->get<double>()) < kLargest)
      return it->get<std::int64_t>();
    return fail(where + key, "an integer below 1e15"), 0;
  }
  bool boolean(const json& j, const std::string& key, const std::string& where) {
    auto it = find(j, key, where);
    if (it && it->is_boolean()) return it->get<bool>();
    return fail(where + key, "true or false"), false;
  }
  std::optional<std::int64_t> opt_integer(const json& j, const std::string& key,
                                          const std::string& where) {
    auto it = find(j, key, where);
    if (it && it->is_null()) return std::nullopt;
    return integer(j, key, where);
  }
  std::optional<double> opt_number(const json& j, const std::string& key,
                                   const std::string& where) {
    auto it = find(j, key, where);
    if (it && it->is_null()) return std::nullopt;
    return number(j, key, where);
  }
  // A field that came later: missing (an older ledger) reads as null.
  std::optional<double> later_number(const json& j, const std::string& key,
                                     const std::string& where) {
    if (!j.contains(key)) return std::nullopt;
    return opt_number(j, key, where);
  }
  const json* object(const json& j, const std::string& key, const std::string& where) {
    auto it = find(j, key, where);
    if (it && it->is_object()) return it;
    return fail(where + key, "an object"), nullptr;
  }
  std::array<double, kBadputCount> badput(const json& j, const std::string& where) {
    std::array<double, kBadputCount> b{};
    if (const json* o = object(j, "badput_seconds", where))
      for (std::size_t i = 0; i < kBadputCount; ++i) {
        const char* name = badput_name(static_cast<Badput>(i));
        // "hang" came later: a ledger written before it has none (0 s).
        if (static_cast<Badput>(i) == Badput::kHang && !o->contains(name)) continue;
        b[i] = number(*o, name, where + "badput_seconds.");
      }
    return b;
  }

 private:
  const json* find(const json& j, const std::string& key, const std::string& where) {
    if (!error_.empty()) return nullptr;
    auto it = j.find(key);
    if (it == j.end()) {
      error_ = "field '" + where + key + "' missing";
      return nullptr;
    }
    return &*it;
  }
  void fail(const std::string& field, const char* expected) {
    if (error_.empty()) error_ = "field '" + field + "' is not " + expected;
  }
  std::string error_;
};

// The optional members `trainvisor report` reads (ledger_history.h).
void read_history(const json& j, ContainerRecord& c) {
  if (j.contains("generations")) c.generations = read_generations(j["generations"]);
  if (j.contains("checkpoints")) c.checkpoints = read_checkpoint_record(j["checkpoints"]);
  c.failure_file = ledger_text_cut(json_field(j, "failure_file", std::string()));
  const int gpus = json_field(j, "gpus", 0);
  if (gpus > 0) c.gpus = gpus;
}

void write_history(json& j, const ContainerRecord& c) {
  if (!c.generations.empty()) j["generations"] = generations_json(c.generations);
  if (c.checkpoints) j["checkpoints"] = checkpoint_record_json(*c.checkpoints);
  if (!c.failure_file.empty()) j["failure_file"] = c.failure_file;
  if (c.gpus) j["gpus"] = *c.gpus;
}

ContainerRecord read_record(Reader& r, const json& j, const std::string& w) {
  ContainerRecord c;
  c.index = static_cast<int>(r.integer(j, "index", w));
  c.started_unix = r.number(j, "started_unix", w);
  c.heartbeat_unix = r.number(j, "heartbeat_unix", w);
  c.ended = r.boolean(j, "ended", w);
  if (auto code = r.opt_integer(j, "exit_code", w)) c.exit_code = static_cast<int>(*code);
  if (const json* p = r.object(j, "phase_seconds", w))
    for (std::size_t i = 0; i < kPhaseCount; ++i)
      c.phase_seconds[i] = r.number(*p, phase_name(static_cast<Phase>(i)), w + "phase_seconds.");
  c.badput = r.badput(j, w);
  c.productive = r.number(j, "productive_seconds", w);
  c.start_step = r.opt_integer(j, "start_step", w);
  c.last_step = r.opt_integer(j, "last_step", w);
  c.seconds_per_step = r.opt_number(j, "seconds_per_step", w);
  c.longest_startup = r.later_number(j, "longest_startup_seconds", w);
  c.longest_save = r.later_number(j, "longest_save_seconds", w);
  c.lost_steps = r.integer(j, "lost_steps", w);
  c.restarts = static_cast<int>(r.integer(j, "restarts", w));
  c.progress_evidence = r.boolean(j, "progress_evidence", w);
  c.lost_progress_known = r.boolean(j, "lost_progress_known", w);
  if (j.contains("stop_save")) c.stop_save = read_stop_save(j["stop_save"]);
  read_history(j, c);
  return c;
}

JobTotals read_totals(Reader& r, const json& j) {
  const std::string w = "folded.";
  JobTotals t;
  t.containers = static_cast<int>(r.integer(j, "containers", w));
  t.first_started_unix = r.number(j, "first_started_unix", w);
  t.last_heartbeat_unix = r.number(j, "last_heartbeat_unix", w);
  t.productive = r.number(j, "productive_seconds", w);
  t.badput = r.badput(j, w);
  t.outside = r.number(j, "outside_seconds", w);
  t.lost_steps = r.integer(j, "lost_steps", w);
  t.restarts = static_cast<int>(r.integer(j, "restarts", w));
  t.progress_evidence = r.boolean(j, "progress_evidence", w);
  t.lost_progress_known = r.boolean(j, "lost_progress_known", w);
  t.last_step = r.opt_integer(j, "last_step", w);
  t.seconds_per_step = r.opt_number(j, "seconds_per_step", w);
  t.longest_startup = r.later_number(j, "longest_startup_seconds", w);
  t.longest_save = r.later_number(j, "longest_save_seconds", w);
  t.last_productive = r.number(j, "last_productive_seconds", w);
  return t;
}

Error corrupt(const std::string& why) { return Error{ErrorKind::kConfig, why}; }

}  // namespace

double job_wall(const JobTotals& t) { return t.productive + sum(t.badput) + t.outside; }

double job_goodput(const JobTotals& t) {
  const double wall = job_wall(t);
  return wall > 0 ? t.productive / wall : 0;
}

void add_container(JobTotals& t, const ContainerRecord& c) {
  if (t.containers == 0) {
    t.first_started_unix = c.started_unix;
  } else {
    t.outside += std::max(0.0, c.started_unix - t.last_heartbeat_unix);
    account_boundary(t, c);
  }
  ++t.containers;
  t.last_heartbeat_unix = std::max(t.last_heartbeat_unix, c.heartbeat_unix);
  t.productive += c.productive;
  for (std::size_t i = 0; i < kBadputCount; ++i) t.badput[i] += c.badput[i];
  t.lost_steps += c.lost_steps;
  t.restarts += c.restarts;
  t.progress_evidence = t.progress_evidence || c.progress_evidence;
  t.lost_progress_known = t.lost_progress_known && c.lost_progress_known;
  t.last_step = c.last_step;
  t.seconds_per_step = c.seconds_per_step;
  for (auto [mine, theirs] : {std::pair{&t.longest_startup, &c.longest_startup},
                              std::pair{&t.longest_save, &c.longest_save}})
    if (*theirs) *mine = std::max(mine->value_or(0), **theirs);
  t.last_productive = c.productive;
}

JobTotals job_totals(const Ledger& l) {
  JobTotals t = l.folded;
  for (const auto& c : l.records) add_container(t, c);
  return t;
}

int next_index(const Ledger& l) {
  return l.records.empty() ? l.folded.containers : l.records.back().index + 1;
}

void put_record(Ledger& l, const ContainerRecord& c) {
  auto at = std::lower_bound(l.records.begin(), l.records.end(), c.index,
                             [](const ContainerRecord& r, int index) { return r.index < index; });
  if (at != l.records.end() && at->index == c.index)
    *at = c;
  else
    l.records.insert(at, c);
  while (l.records.size() > kLedgerRecords) {
    add_container(l.folded, l.records.front());
    l.records.erase(l.records.begin());
  }
}

ContainerRecord record_from(const GoodputSnapshot& s, int index, double started_unix,
                            double now_unix, bool ended) {
  ContainerRecord c;
  c.index = index;
  c.started_unix = started_unix;
  c.heartbeat_unix = now_unix;
  c.ended = ended;
  c.exit_code = s.exit_code;
  c.phase_seconds = s.phase_seconds;
  c.badput = s.badput;
  c.productive = s.productive;
  c.start_step = s.start_step;
  c.last_step = s.step;
  c.seconds_per_step = s.seconds_per_step;
  c.longest_startup = s.longest_startup;
  c.longest_save = s.longest_write_seconds;
  c.lost_steps = s.lost_steps;
  c.restarts = s.restarts;
  c.progress_evidence = s.progress_evidence;
  c.lost_progress_known = s.lost_progress_known;
  if (s.checkpoints > 0)
    c.checkpoints = CheckpointRecord{s.checkpoints, s.checkpoint_cost, s.checkpoint_interval};
  return c;
}

std::string ledger_text(const Ledger& l) {
  json records = json::array();
  for (const auto& c : l.records) {
    records.push_back(record_json(c));
    if (c.stop_save) records.back()["stop_save"] = stop_save_json(*c.stop_save);
    write_history(records.back(), c);
  }
  json j = {{"format", "trainvisor-ledger"},
            {"version", kLedgerVersion},
            {"job_id", l.job_id},
            {"folded", totals_json(l.folded)},
            {"records", records}};
  if (!l.poisoned.empty()) j["poisoned"] = marks_json(l.poisoned);
  return json_text(j, 1) + "\n";
}

Result<Ledger> parse_ledger(std::string_view text) {
  auto parsed = parse_json(text);
  if (!parsed) return corrupt("not JSON (" + parsed.error().message + ")");
  const json& j = *parsed;
  if (!j.is_object() || j.value("format", json()) != "trainvisor-ledger")
    return corrupt("not a trainvisor ledger (no \"format\": \"trainvisor-ledger\")");
  Reader r;
  const auto version = r.integer(j, "version", "");
  if (r.error().empty() && version != kLedgerVersion)
    return corrupt("version " + std::to_string(version) + ", expected " +
                   std::to_string(kLedgerVersion));
  Ledger l;
  auto id = j.find("job_id");
  if (id == j.end() || !id->is_string()) return corrupt("field 'job_id' missing or not a string");
  l.job_id = id->get<std::string>();
  if (const json* f = r.object(j, "folded", "")) l.folded = read_totals(r, *f);
  auto recs = j.find("records");
  if (recs == j.end() || !recs->is_array()) return corrupt("field 'records' missing or not a list");
  if (recs->size() > kLedgerRecords)
    return corrupt(std::to_string(recs->size()) + " records, at most " +
                   std::to_string(kLedgerRecords));
  for (std::size_t i = 0; i < recs->size(); ++i) {
    const json& rec = (*recs)[i];
    if (!rec.is_object()) return corrupt("records[" + std::to_string(i) + "] is not an object");
    l.records.push_back(read_record(r, rec, "records[" + std::to_string(i) + "]."));
  }
  if (!r.error().empty()) return corrupt(r.error());
  if (auto p = j.find("poisoned"); p != j.end()) l.poisoned = read_marks(*p);
  for (std::size_t i = 0; i < l.records.size(); ++i)
    if (l.records[i].index < (i == 0 ? l.folded.containers : l.records[i - 1].index + 1))
      return corrupt("records[" + std::to_string(i) + "].index " +
                     std::to_string(l.records[i].index) + " is out of order");
  return l;
}

}  // namespace tv
