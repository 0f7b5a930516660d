// skrl / Isaac Lab checkpoints: see candidates.h for the rules.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "checkpoint/candidates.h"
#include "common/parse_number.h"

namespace tv {
namespace {

struct PtName {
  std::string module;
  std::int64_t step = -1;  // -1: best_<module>.pt
};

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::optional<PtName> parse_pt_name(std::string_view name) {
  if (!name.ends_with(".pt")) return std::nullopt;
  name.remove_suffix(3);
  if (name.starts_with("best_") && name.size() > 5) return PtName{std::string(name.substr(5)), -1};
  const auto us = name.rfind('_');
  if (us == std::string_view::npos || us == 0 || !all_digits(name.substr(us + 1)))
    return std::nullopt;
  auto step = parse_integer<std::int64_t>(name.substr(us + 1), 0, INT64_MAX);
  if (!step) return std::nullopt;
  return PtName{std::string(name.substr(0, us)), *step};
}

// step (-1 = best) -> module -> file name, for one directory.
using Groups = std::map<std::int64_t, std::map<std::string, std::string>>;

Candidate make(const ListedDir& dir, std::int64_t step,
               const std::map<std::string, std::string>& m) {
  Candidate c;
  c.kind = CandidateKind::kZip;
  c.best = step < 0;
  c.write_once = !c.best;
  c.checkpoint.format = "skrl";
  c.checkpoint.step = step;
  c.checkpoint.run = run_in_path(dir.rel);
  for (const auto& [module, file] : m) c.checkpoint.files.push_back(join_path(dir.path, file));
  const auto policy = m.find("policy");
  c.checkpoint.path = join_path(dir.path, policy != m.end() ? policy->second : m.begin()->second);
  c.primary = c.checkpoint.path;
  return c;
}

std::string missing_modules(const std::map<std::string, std::string>& have,
                            const std::set<std::string>& expected) {
  std::string missing;
  for (const auto& module : expected)
    if (!have.count(module)) missing += (missing.empty() ? "" : ", ") + module;
  return missing.empty() ? "" : "module files missing (" + missing + ") that the previous step has";
}

void add_dir(const ListedDir& dir, std::vector<Candidate>& out) {
  Groups groups;
  for (const auto& f : dir.files)
    if (auto p = parse_pt_name(f)) groups[p->step][p->module] = f;
  std::set<std::string> previous;
  for (const auto& [step, modules] : groups) {
    Candidate c = make(dir, step, modules);
    if (step >= 0) {
      c.missing = missing_modules(modules, previous);
      previous.clear();
      for (const auto& kv : modules) previous.insert(kv.first);
    }
    out.push_back(std::move(c));
  }
}

}  // namespace

std::vector<Candidate> skrl_candidates(const Tree& tree) {
  std::vector<Candidate> all;
  for (const auto& dir : tree.dirs) add_dir(dir, all);
  // Sort small keys (run rank, step, index), not the candidates: 100,000 files in one directory
  // would otherwise spend most of the time comparing equal run names and moving strings.
  std::map<std::string, std::size_t> runs;  // run name -> rank in time order
  for (const auto& c : all) runs.emplace(c.checkpoint.run, 0);
  std::size_t rank = 0;
  for (auto& [name, r] : runs) r = rank++;
  struct Key {
    std::size_t run;
    std::int64_t step;
    std::size_t index;
  };
  std::vector<Key> keys;
  keys.reserve(all.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    keys.push_back({runs[all[i].checkpoint.run], all[i].checkpoint.step, i});
  std::sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) {
    if (a.run != b.run || a.step != b.step)
      return std::tie(a.run, a.step) > std::tie(b.run, b.step);
    return all[a.index].checkpoint.path > all[b.index].checkpoint.path;
  });
  std::vector<Candidate> out;
  out.reserve(all.size());
  for (const auto& k : keys) out.push_back(std::move(all[k.index]));
  return out;
}

std::int64_t step_in_name(const std::string& name) {
  auto end = name.find_last_of("0123456789");
  if (end == std::string::npos) return -1;
  auto begin = name.find_last_not_of("0123456789", end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  const std::string digits = name.substr(begin, std::min<std::size_t>(end + 1 - begin, 18));
  return parse_integer<std::int64_t>(digits, 0, INT64_MAX).value_or(-1);
}

static bool is_run_name(std::string_view s) {
  static constexpr std::string_view kShape = "dddd-dd-dd_dd-dd-dd";
  if (s.size() < kShape.size()) return false;
  for (std::size_t i = 0; i < kShape.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(s[i]));
    if ((kShape[i] == 'd') != digit || (kShape[i] != 'd' && s[i] != kShape[i])) return false;
  }
  return true;
}

std::string run_in_path(const std::string& rel) {
  std::size_t end = rel.size();
  while (end > 0) {
    const auto slash = rel.rfind('/', end - 1);
    const std::size_t begin = slash == std::string::npos ? 0 : slash + 1;
    const std::string_view part(rel.data() + begin, end - begin);
    if (is_run_name(part)) return std::string(part);
    if (slash == std::string::npos) break;
    end = slash;
  }
  return "";
}

}  // namespace tv
