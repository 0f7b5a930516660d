// glob:PATTERN[,RULE]: matches of PATTERN (relative to the checkpoint directory, fnmatch with
// FNM_PATHNAME) are candidates; RULE says when one is complete:
//   done=SUFFIX    a marker file <match>SUFFIX beside it, not older than the match (default
//                  done=.done)
//   marker=NAME    a file NAME inside the matched directory (a framework's own marker:
//                  trainer_state.json, .metadata, cosmos_config, ...)
//   pointer=FILE   FILE in the match's parent directory names the newest complete save
//                  (DeepSpeed `latest`, latest_checkpoint.txt): matches whose step is not after it
//   settle=SECONDS the match (a file, or the files directly in a matched directory) unchanged
//                  for that long
// and, besides (or instead of) one of those, any of
//   absent=SUFFIX  complete only while <match>SUFFIX is not there (NeMo's -unfinished)
//   exclude=PATTERN names (fnmatch) that are never candidates (Orbax's *.orbax-checkpoint-tmp-*)
//   check=KIND     the match's content checked as torch, safetensors, dcp or json
// Ordered by run (the nearest ancestor with a time stamp in its name, else the match's directory,
// by its newest match), then within a run by when each became complete (marker mtime; settle:
// newest mtime), pointer and marker rules by step first.
#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

#include "checkpoint/candidates.h"
#include "checkpoint/names.h"

namespace tv {
namespace {

struct Spec {
  std::string pattern;
  std::string rule = "done";  // done, marker, pointer, settle, or none
  std::string value = ".done";
  std::vector<std::string> absent;  // absent=SUFFIX: complete only while <match>SUFFIX is not there
  std::vector<std::string> exclude;  // exclude=PATTERN: names (fnmatch) that are never candidates
  std::string check;                 // check=torch|safetensors|dcp|json: the match's content
  std::string bad;                   // the first unknown or repeated rule
};

bool primary(std::string_view key) {
  return key == "done" || key == "marker" || key == "pointer" || key == "settle";
}

// PATTERN[,KEY=VALUE...]: rules are peeled off the end while the last comma-separated piece holds
// a '=' (a pattern may hold commas too).
Spec parse_spec(const std::string& spec) {
  Spec s;
  std::string rest = spec;
  bool have_primary = false, have_other = false;
  for (;;) {
    const auto comma = rest.rfind(',');
    const auto eq = comma == std::string::npos ? std::string::npos : rest.find('=', comma);
    if (eq == std::string::npos) break;
    const std::string key = rest.substr(comma + 1, eq - comma - 1);
    const std::string value = rest.substr(eq + 1);
    rest.resize(comma);
    if (primary(key)) {
      if (have_primary && s.bad.empty())
        s.bad = "more than one of done=, marker=, pointer=, settle=";
      have_primary = true;
      s.rule = key;
      s.value = value;
    } else if (key == "absent") {
      s.absent.push_back(value);
      have_other = true;
    } else if (key == "exclude") {
      s.exclude.push_back(value);
      have_other = true;
    } else if (key == "check") {
      s.check = value;
      have_other = true;
    } else if (s.bad.empty()) {
      s.bad = "unknown rule '" + key +
              "' (done=, marker=, pointer=, settle=, absent=, exclude=, check=)";
    }
  }
  s.pattern = rest;
  if (!have_primary && have_other) s.rule = "none";
  return s;
}

std::string rel_join(const std::string& rel, std::string_view name) {
  return rel.empty() ? std::string(name) : rel + "/" + std::string(name);
}

Candidate make(const ListedDir& dir, std::string_view name, const Spec& spec, CheckpointFs& fs) {
  Candidate c;
  c.layout = Layout::kGlob;
  c.write_once = false;
  c.checkpoint.format = "glob";
  c.checkpoint.path = join_path(dir.path, name);
  c.checkpoint.step = step_in_name(name);
  c.checkpoint.run_dir = dir.path;
  c.checkpoint.run = std::string(dir.name());
  c.checkpoint.files = {c.checkpoint.path};
  c.glob_rule = spec.rule + "=" + spec.value;
  c.primary = c.checkpoint.path;
  for (const auto& suffix : spec.absent)
    if (dir.files.contains(std::string(name) + suffix) && c.missing.empty())
      c.missing =
          c.checkpoint.path + suffix + " is there (absent=" + suffix + ": a save in progress)";
  if (spec.check == "torch") c.parts.push_back({c.checkpoint.path, PartKind::kTorch});
  if (spec.check == "safetensors") c.parts.push_back({c.checkpoint.path, PartKind::kSafetensors});
  if (spec.check == "dcp") c.parts.push_back({c.checkpoint.path, PartKind::kDcp});
  if (spec.check == "json") c.parts.push_back({c.checkpoint.path, PartKind::kJson});
  if (spec.rule == "done") {
    c.marker = c.checkpoint.path + spec.value;
    c.primary = c.marker;
    if (!dir.files.contains(std::string(name) + spec.value))
      c.missing = "no completion marker " + c.marker;
    else if (auto st = fs.stat(c.marker))
      c.order_ns = st->mtime_ns;
  } else if (spec.rule == "marker") {
    c.marker = join_path(c.checkpoint.path, spec.value);
    c.primary = c.marker;
    if (auto st = fs.stat(c.marker)) c.order_ns = st->mtime_ns;
  } else if (spec.rule == "pointer") {
    c.pointer = join_path(dir.path, spec.value);
    if (auto st = fs.stat(c.checkpoint.path)) c.order_ns = st->mtime_ns;
  } else if (auto st = fs.stat(c.checkpoint.path)) {
    c.order_ns = st->mtime_ns;  // settle and none
  }
  c.checkpoint.directory = dir.subdirs.contains(name);
  return c;
}

}  // namespace

bool valid_glob_spec(const std::string& spec, std::string* why) {
  const Spec s = parse_spec(spec);
  if (!s.bad.empty()) {
    *why = s.bad;
    return false;
  }
  if (s.pattern.empty() || s.pattern.front() == '/') {
    *why = "PATTERN must be non-empty and relative to --checkpoint-dir";
    return false;
  }
  for (const auto& v : s.absent)
    if (v.empty() || v.find('/') != std::string::npos) {
      *why = "absent= needs a file name suffix (no '/')";
      return false;
    }
  for (const auto& v : s.exclude)
    if (v.empty()) {
      *why = "exclude= needs a name pattern";
      return false;
    }
  if (!s.check.empty() && s.check != "torch" && s.check != "safetensors" && s.check != "dcp" &&
      s.check != "json") {
    *why = "check= is one of torch, safetensors, dcp, json";
    return false;
  }
  if (s.rule == "none") return true;
  if (s.rule == "done" || s.rule == "marker" || s.rule == "pointer") {
    if (!s.value.empty() && s.value.find('/') == std::string::npos) return true;
    *why = s.rule + "= needs a file name (no '/')";
    return false;
  }
  char* end = nullptr;
  const double v = std::strtod(s.value.c_str(), &end);
  if (!s.value.empty() && end && *end == '\0' && v >= 0 && v <= 86400) return true;
  *why = "settle= needs seconds between 0 and 86400";
  return false;
}

namespace {

// The run a match belongs to: its nearest ancestor directory with a time stamp in its name (that
// time orders it), else the directory holding it (ordered by its newest match's time).
struct RunOf {
  std::string dir;
  std::int64_t ns = 0;
  bool stamped = false;
};

RunOf run_of(const Tree& tree, const std::string& match_dir) {
  for (std::uint32_t d = tree.find(match_dir); d != kNoDir; d = tree.dirs[d].parent)
    if (auto ns = run_stamp_ns(tree.dirs[d].name())) return {tree.dirs[d].path, *ns, true};
  return {match_dir, 0, false};
}

}  // namespace

std::vector<Candidate> glob_candidates(const Tree& tree, const std::string& spec_text,
                                       CheckpointFs& fs) {
  const Spec spec = parse_spec(spec_text);
  std::vector<Candidate> out;
  for (const auto& dir : tree.dirs) {
    auto consider = [&](std::string_view name) {
      if (spec.rule == "done" && name.ends_with(spec.value)) return;
      for (const auto& suffix : spec.absent)
        if (name.ends_with(suffix)) return;  // the marker itself
      const std::string n(name);
      for (const auto& x : spec.exclude)
        if (::fnmatch(x.c_str(), n.c_str(), 0) == 0) return;
      const std::string rel = rel_join(dir.rel, name);
      if (::fnmatch(spec.pattern.c_str(), rel.c_str(), FNM_PATHNAME) == 0)
        out.push_back(make(dir, name, spec, fs));
    };
    for (std::size_t i = 0; i < dir.files.size(); ++i) consider(dir.files[i]);
    for (std::size_t i = 0; i < dir.subdirs.size(); ++i) consider(dir.subdirs[i]);
  }
  // Runs first (an older experiment's higher step never wins), then within a run: step first
  // for the marker and pointer rules, else when each became complete.
  std::map<std::string, RunOf> runs;
  for (const auto& c : out) {
    const std::string dir = parent_of(c.checkpoint.path);
    auto [it, added] = runs.try_emplace(dir, RunOf{});
    if (added) it->second = run_of(tree, dir);
  }
  std::map<std::string, std::int64_t> newest;  // unstamped run -> its newest match's time
  for (const auto& c : out) {
    const RunOf& r = runs[parent_of(c.checkpoint.path)];
    if (!r.stamped) newest[r.dir] = std::max(newest[r.dir], c.order_ns);
  }
  auto key = [&](const Candidate& c) {
    const RunOf& r = runs[parent_of(c.checkpoint.path)];
    return std::make_pair(r.stamped ? r.ns : newest[r.dir], r.dir);
  };
  for (auto& c : out) {
    const RunOf& r = runs[parent_of(c.checkpoint.path)];
    c.checkpoint.run_dir = r.dir;
    c.checkpoint.run = base_of(r.dir);
  }
  const bool by_step = spec.rule == "pointer" || spec.rule == "marker";
  std::sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
    const auto ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    if (by_step && a.checkpoint.step != b.checkpoint.step)
      return a.checkpoint.step > b.checkpoint.step;
    return std::tie(a.order_ns, a.checkpoint.step, a.checkpoint.path) >
           std::tie(b.order_ns, b.checkpoint.step, b.checkpoint.path);
  });
  return out;
}

}  // namespace tv
