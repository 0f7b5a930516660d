// glob:PATTERN checkpoints, each complete only with its `<match>.done` marker (candidates.h).
#include <fnmatch.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "checkpoint/candidates.h"

namespace tv {
namespace {

constexpr std::string_view kMarkerSuffix = ".done";

bool matches(const std::string& pattern, const std::string& rel) {
  return !rel.ends_with(kMarkerSuffix) &&
         ::fnmatch(pattern.c_str(), rel.c_str(), FNM_PATHNAME) == 0;
}

Candidate make(const std::string& path, const std::string& name, bool has_marker,
               CheckpointFs& fs) {
  Candidate c;
  c.kind = CandidateKind::kGlob;
  c.write_once = false;
  c.checkpoint.format = "glob";
  c.checkpoint.path = path;
  c.checkpoint.step = step_in_name(name);
  c.checkpoint.files = {path};
  c.marker = path + std::string(kMarkerSuffix);
  c.primary = c.marker;
  if (!has_marker) {
    c.missing = "no completion marker " + c.marker;
  } else if (auto st = fs.stat(c.marker)) {
    c.order_ns = st->mtime_ns;
  }
  return c;
}

std::string rel_join(const std::string& rel, const std::string& name) {
  return rel.empty() ? name : rel + "/" + name;
}

void add_dir(const ListedDir& dir, const std::string& pattern, CheckpointFs& fs,
             std::vector<Candidate>& out) {
  const std::set<std::string> files(dir.files.begin(), dir.files.end());
  auto consider = [&](const std::string& name) {
    if (!matches(pattern, rel_join(dir.rel, name))) return;
    const bool marked = files.count(name + std::string(kMarkerSuffix)) > 0;
    out.push_back(make(join_path(dir.path, name), name, marked, fs));
  };
  for (const auto& f : dir.files) consider(f);
  for (const auto& d : dir.subdirs) consider(d);
}

}  // namespace

std::vector<Candidate> glob_candidates(const Tree& tree, const std::string& pattern,
                                       CheckpointFs& fs) {
  std::vector<Candidate> out;
  for (const auto& dir : tree.dirs) add_dir(dir, pattern, fs, out);
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.order_ns, a.checkpoint.step, a.checkpoint.path) >
           std::tie(b.order_ns, b.checkpoint.step, b.checkpoint.path);
  });
  return out;
}

}  // namespace tv
