#include "launcher/observability/ledger_history.h"

#include <algorithm>
#include <cmath>

#include "common/json_field.h"

namespace tv {

using nlohmann::json;

namespace {

constexpr double kLargest = 1e15;  // as the ledger's own numbers (ledger.cc)

std::optional<double> opt_number(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number()) return std::nullopt;
  const double v = j[key].get<double>();
  if (!std::isfinite(v) || std::abs(v) >= kLargest) return std::nullopt;
  return v;
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(); }

std::vector<std::string> read_paths(const json& j) {
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const json& p : j)
    if (p.is_string() && out.size() < kEvidencePaths)
      out.push_back(ledger_text_cut(p.get<std::string>()));
  return out;
}

// {"evidence": i, "line": ...}: the generation's evidence path i (`paths`, already read).
std::vector<ExceptionLine> read_exceptions(const json& j, const std::vector<std::string>& paths) {
  std::vector<ExceptionLine> out;
  if (!j.is_array()) return out;
  for (const json& e : j) {
    const auto i = json_field(e, "evidence", std::size_t{paths.size()});
    const auto line = json_field(e, "line", std::string());
    if (i < paths.size() && !line.empty()) out.push_back({paths[i], line});
  }
  return out;
}

json exceptions_json(const GenerationRecord& g) {
  json a = json::array();
  for (const auto& e : g.exceptions) {
    const auto at = std::find(g.evidence.begin(), g.evidence.end(), e.path);
    if (at != g.evidence.end())
      a.push_back({{"evidence", at - g.evidence.begin()}, {"line", e.line}});
  }
  return a;
}

}  // namespace

std::string ledger_text_cut(std::string text, std::size_t cap) {
  if (text.size() <= cap) return text;
  std::size_t n = cap;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  text.resize(n);
  return text;
}

json generations_json(const std::vector<GenerationRecord>& gens) {
  json a = json::array();
  for (const auto& g : gens)
    a.push_back({{"generation", g.number},
                 {"started_unix", g.started_unix},
                 {"ended_unix", opt(g.ended_unix)},
                 {"outcome", g.outcome},
                 {"summary", g.summary},
                 {"evidence", g.evidence},
                 {"exceptions", exceptions_json(g)}});
  return a;
}

std::vector<GenerationRecord> read_generations(const json& j) {
  std::vector<GenerationRecord> out;
  if (!j.is_array()) return out;
  for (const json& e : j) {
    auto started = opt_number(e, "started_unix");
    const int number = json_field(e, "generation", -1);
    if (!started || number < 0) continue;
    GenerationRecord g;
    g.number = number;
    g.started_unix = *started;
    g.ended_unix = opt_number(e, "ended_unix");
    g.outcome = ledger_text_cut(json_field(e, "outcome", std::string("running")));
    g.summary = ledger_text_cut(json_field(e, "summary", std::string()));
    if (e.is_object() && e.contains("evidence")) g.evidence = read_paths(e["evidence"]);
    if (e.is_object() && e.contains("exceptions"))
      g.exceptions = read_exceptions(e["exceptions"], g.evidence);
    add_generation(out, std::move(g));
  }
  return out;
}

void add_generation(std::vector<GenerationRecord>& gens, GenerationRecord g) {
  g.summary = ledger_text_cut(std::move(g.summary));
  if (g.evidence.size() > kEvidencePaths) g.evidence.resize(kEvidencePaths);
  for (auto& p : g.evidence) p = ledger_text_cut(std::move(p));
  for (auto& e : g.exceptions) e.path = ledger_text_cut(std::move(e.path));
  std::erase_if(g.exceptions, [&g](const ExceptionLine& e) {
    return e.line.empty() ||
           std::find(g.evidence.begin(), g.evidence.end(), e.path) == g.evidence.end();
  });
  if (g.exceptions.size() > kExceptionLines) g.exceptions.resize(kExceptionLines);
  for (auto& e : g.exceptions) e.line = ledger_text_cut(std::move(e.line), kExceptionLineCap);
  gens.push_back(std::move(g));
  if (gens.size() > kLedgerGenerations) gens.erase(gens.begin());
}

void add_evidence(GenerationRecord& g, const std::string& path, const std::string& exception) {
  std::string p = ledger_text_cut(path);
  if (std::find(g.evidence.begin(), g.evidence.end(), p) != g.evidence.end()) return;
  if (g.evidence.size() >= kEvidencePaths) return;
  g.evidence.push_back(p);
  if (!exception.empty() && g.exceptions.size() < kExceptionLines)
    g.exceptions.push_back({std::move(p), ledger_text_cut(exception, kExceptionLineCap)});
}

GenerationRecord* find_generation(std::vector<GenerationRecord>& gens, int number) {
  auto it = std::find_if(gens.rbegin(), gens.rend(),
                         [number](const GenerationRecord& g) { return g.number == number; });
  return it == gens.rend() ? nullptr : &*it;
}

json checkpoint_record_json(const CheckpointRecord& c) {
  return {{"count", c.count},
          {"cost_seconds", opt(c.cost_seconds)},
          {"interval_seconds", opt(c.interval_seconds)}};
}

std::optional<CheckpointRecord> read_checkpoint_record(const json& j) {
  if (!j.is_object()) return std::nullopt;
  CheckpointRecord c;
  c.count = std::max(0L, json_field(j, "count", 0L));
  c.cost_seconds = opt_number(j, "cost_seconds");
  c.interval_seconds = opt_number(j, "interval_seconds");
  return c;
}

}  // namespace tv
