// PyTorch Distributed Checkpoint (DCP) directories: see candidates.h for the rules.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "checkpoint/candidates.h"

namespace tv {
namespace {

bool is_dcp_unit(const ListedDir& dir) {
  return std::any_of(dir.files.begin(), dir.files.end(), [](const std::string& f) {
    return f == ".metadata" || f == ".metadata.tmp" || f.ends_with(".distcp");
  });
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// cosmos: <job>/checkpoints/iter_000001000/{model,optim}: the step-less unit joins its parent.
std::string group_of(const ListedDir& unit) {
  if (unit.rel.empty() || step_in_name(base_of(unit.rel)) >= 0) return unit.path;
  const std::string parent_rel = parent_of(unit.rel);
  if (parent_rel.empty() || step_in_name(base_of(parent_rel)) < 0) return unit.path;
  return parent_of(unit.path);
}

std::int64_t metadata_mtime(CheckpointFs& fs, const std::vector<std::string>& units) {
  std::int64_t newest = 0;
  for (const auto& u : units)
    if (auto st = fs.stat(join_path(u, ".metadata"))) newest = std::max(newest, st->mtime_ns);
  return newest;
}

// latest_checkpoint.txt (cosmos) or latest (DeepSpeed-style): the name of the newest save.
std::string read_pointer(CheckpointFs& fs, const ListedDir& dir) {
  for (const char* name : {"latest_checkpoint.txt", "latest"}) {
    if (std::find(dir.files.begin(), dir.files.end(), name) == dir.files.end()) continue;
    auto text = fs.read_range(join_path(dir.path, name), 0, 4096);
    if (!text) continue;
    std::string s = *text;
    s.erase(std::remove_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }),
            s.end());
    while (!s.empty() && (s.back() == '/' || s.back() == ' ')) s.pop_back();
    return base_of(s);
  }
  return "";
}

void mark_pointed(const Tree& tree, CheckpointFs& fs, std::vector<Candidate>& out) {
  for (const auto& dir : tree.dirs) {
    const std::string target = read_pointer(fs, dir);
    if (target.empty()) continue;
    bool found = false;
    for (auto& c : out)
      if (parent_of(c.checkpoint.path) == dir.path && base_of(c.checkpoint.path) == target)
        c.pointed = found = true;
    if (!found)
      spdlog::info("checkpoint: latest pointer in {} names {}, which is not a DCP checkpoint here",
                   dir.path, target);
  }
}

}  // namespace

std::vector<Candidate> dcp_candidates(const Tree& tree, CheckpointFs& fs) {
  std::map<std::string, std::vector<std::string>> groups;  // group dir -> unit dirs
  for (const auto& dir : tree.dirs)
    if (is_dcp_unit(dir)) groups[group_of(dir)].push_back(dir.path);
  std::vector<Candidate> out;
  for (auto& [path, units] : groups) {
    Candidate c;
    c.kind = CandidateKind::kDcp;
    c.write_once = false;
    c.checkpoint.format = "dcp";
    c.checkpoint.path = path;
    c.checkpoint.step = step_in_name(base_of(path));
    std::sort(units.begin(), units.end());
    c.checkpoint.files = units;
    c.primary = join_path(units.front(), ".metadata");
    c.order_ns = metadata_mtime(fs, units);
    out.push_back(std::move(c));
  }
  mark_pointed(tree, fs, out);
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.checkpoint.step, a.pointed, a.order_ns, a.checkpoint.path) >
           std::tie(b.checkpoint.step, b.pointed, b.order_ns, b.checkpoint.path);
  });
  return out;
}

}  // namespace tv
