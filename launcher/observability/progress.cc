#include "launcher/observability/progress.h"

#include <algorithm>
#include <limits>
#include <string_view>

#include "common/exit_codes.h"
#include "common/parse_number.h"

namespace tv {
namespace {

std::optional<std::int64_t> to_int(const boost::csub_match& m) {
  if (!m.matched) return std::nullopt;
  return parse_integer<std::int64_t>(std::string_view(m.first, m.second - m.first),
                                     std::numeric_limits<std::int64_t>::min(),
                                     std::numeric_limits<std::int64_t>::max());
}

int group_index(const boost::regex& re, std::string_view name) {
  auto subs = re.get_named_subs();
  return subs ? subs->get_id(name.data(), name.data() + name.size()) : -1;
}

}  // namespace

const std::vector<BuiltinProgressPattern>& builtin_progress_patterns() {
  static const std::vector<BuiltinProgressPattern> patterns = {
      // rsl_rl OnPolicyRunner.log(): " \033[1m Learning iteration {it}/{tot_iter} \033[0m "
      {"rsl_rl", R"(Learning iteration (?<step>\d+)/(?<total>\d+))"},
      // tqdm's default r_bar "| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]":
      // skrl's SequentialTrainer and HF Trainer's ProgressCallback both draw it.
      {"tqdm (skrl, HF Trainer)", R"(\|\s*(?<step>\d+)/(?<total>\d+) \[\d)"},
      // Cosmos (imaginaire IterSpeed callback): "{iteration} : iter_speed {s:.2f} seconds per
      // iteration"
      {"cosmos", R"((?<step>\d+) : iter_speed [0-9.]+ seconds per iteration)"},
      // ... and its first iterations: "Iteration {iteration}: Hit counter: {n}/{thres} | ..."
      {"cosmos", R"(Iteration (?<step>\d+): Hit counter)"},
  };
  return patterns;
}

Result<ProgressParser::Pattern> ProgressParser::compile(const std::string& regex,
                                                        const std::string& origin) {
  Pattern p;
  try {
    p.re = boost::regex(regex, boost::regex::perl);
  } catch (const boost::regex_error& e) {
    return Error{ErrorKind::kConfig, origin + "=\"" + regex +
                                         "\": not a valid regular expression (" + e.what() +
                                         "); expected e.g. 'step (?<step>\\d+)/(?<total>\\d+)'"};
  }
  p.step = group_index(p.re, "step");
  p.total = group_index(p.re, "total");
  p.tflops = group_index(p.re, "tflops");
  if (p.step < 0)
    return Error{ErrorKind::kConfig, origin + "=\"" + regex +
                                         "\": has no (?<step>\\d+) group; expected e.g. 'step "
                                         "(?<step>\\d+)/(?<total>\\d+)', or auto"};
  return p;
}

Result<ProgressParser> ProgressParser::make(const std::string& spec, const std::string& origin) {
  ProgressParser parser;
  if (spec == "auto") {
    for (const auto& b : builtin_progress_patterns()) {
      auto p = compile(b.regex, origin);
      if (!p) return p.error();
      parser.patterns_.push_back(std::move(*p));
    }
    return parser;
  }
  auto p = compile(spec, origin);
  if (!p) return p.error();
  parser.patterns_.push_back(std::move(*p));
  return parser;
}

std::optional<Progress> ProgressParser::parse(std::string_view segment) const {
  boost::cmatch m;
  for (const auto& p : patterns_) {
    try {
      if (!boost::regex_search(segment.data(), segment.data() + segment.size(), m, p.re)) continue;
    } catch (const std::runtime_error&) {  // Boost gives up on pathological backtracking
      continue;
    }
    auto step = to_int(m[p.step]);
    if (!step) continue;
    Progress out{*step, std::nullopt, std::nullopt};
    if (p.total >= 0) out.total = to_int(m[p.total]);
    if (p.tflops >= 0 && m[p.tflops].matched)
      out.tflops = parse_finite(std::string_view(m[p.tflops].first, m[p.tflops].length()), 0, 1e9);
    return out;
  }
  return std::nullopt;
}

bool ProgressParser::has_tflops() const {
  return std::any_of(patterns_.begin(), patterns_.end(),
                     [](const Pattern& p) { return p.tflops >= 0; });
}

void ProgressTap::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto end = bytes.find_first_of("\r\n");
    const auto piece = bytes.substr(0, end);
    partial_.append(piece);
    if (partial_.size() > kMaxSegment) partial_.erase(0, partial_.size() - kMaxSegment);
    if (end == std::string_view::npos) return;
    emit();
    bytes.remove_prefix(end + 1);
  }
}

void ProgressTap::finish() { emit(); }

void ProgressTap::emit() {
  if (!partial_.empty())
    if (auto p = parser_.parse(partial_)) sink_(*p);
  partial_.clear();
}

}  // namespace tv
