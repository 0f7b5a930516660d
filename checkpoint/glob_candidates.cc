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
// Ordered by when each became complete (marker mtime; settle: newest mtime), pointer and marker
// rules by step first.
#include <fnmatch.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>

#include "checkpoint/candidates.h"
#include "checkpoint/names.h"

namespace tv {
namespace {

struct Spec {
  std::string pattern;
  std::string rule = "done";
  std::string value = ".done";
};

Spec parse_spec(const std::string& spec) {
  Spec s;
  const auto comma = spec.rfind(',');
  const auto eq = comma == std::string::npos ? std::string::npos : spec.find('=', comma);
  if (eq == std::string::npos) {
    s.pattern = spec;
    return s;
  }
  s.pattern = spec.substr(0, comma);
  s.rule = spec.substr(comma + 1, eq - comma - 1);
  s.value = spec.substr(eq + 1);
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
    c.order_ns = st->mtime_ns;
  }
  c.checkpoint.directory = dir.subdirs.contains(name);
  return c;
}

}  // namespace

bool valid_glob_spec(const std::string& spec, std::string* why) {
  const Spec s = parse_spec(spec);
  if (s.pattern.empty() || s.pattern.front() == '/') {
    *why = "PATTERN must be non-empty and relative to --checkpoint-dir";
    return false;
  }
  if (s.rule == "done" || s.rule == "marker" || s.rule == "pointer") {
    if (!s.value.empty() && s.value.find('/') == std::string::npos) return true;
    *why = s.rule + "= needs a file name (no '/')";
    return false;
  }
  if (s.rule == "settle") {
    char* end = nullptr;
    const double v = std::strtod(s.value.c_str(), &end);
    if (!s.value.empty() && end && *end == '\0' && v >= 0 && v <= 86400) return true;
    *why = "settle= needs seconds between 0 and 86400";
    return false;
  }
  *why = "unknown rule '" + s.rule + "' (done=, marker=, pointer=, settle=)";
  return false;
}

std::vector<Candidate> glob_candidates(const Tree& tree, const std::string& spec_text,
                                       CheckpointFs& fs) {
  const Spec spec = parse_spec(spec_text);
  std::vector<Candidate> out;
  for (const auto& dir : tree.dirs) {
    auto consider = [&](std::string_view name) {
      if (spec.rule == "done" && name.ends_with(spec.value)) return;
      const std::string rel = rel_join(dir.rel, name);
      if (::fnmatch(spec.pattern.c_str(), rel.c_str(), FNM_PATHNAME) == 0)
        out.push_back(make(dir, name, spec, fs));
    };
    for (std::size_t i = 0; i < dir.files.size(); ++i) consider(dir.files[i]);
    for (std::size_t i = 0; i < dir.subdirs.size(); ++i) consider(dir.subdirs[i]);
  }
  const bool by_step = spec.rule == "pointer" || spec.rule == "marker";
  std::sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
    if (by_step && a.checkpoint.step != b.checkpoint.step)
      return a.checkpoint.step > b.checkpoint.step;
    return std::tie(a.order_ns, a.checkpoint.step, a.checkpoint.path) >
           std::tie(b.order_ns, b.checkpoint.step, b.checkpoint.path);
  });
  return out;
}

}  // namespace tv
