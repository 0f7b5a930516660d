// Materialization: a Key (recognize.cc) becomes a full Candidate with its parts, only for the
// keys that selection actually examines. The rules per layout are in docs/checkpoints.md.
#include <algorithm>
#include <map>
#include <set>

#include "checkpoint/candidates.h"
#include "checkpoint/names.h"

namespace tv {
namespace {

constexpr std::string_view kCosmosParts[] = {"model", "optim", "scheduler", "trainer"};

using ModuleSet = std::set<std::string, std::less<>>;

class Materializer {
 public:
  Materializer(const Tree& tree, const Key& key, CheckpointFs& fs,
               const std::vector<SkrlModules>* modules)
      : tree_(tree), key_(key), fs_(fs), dir_(tree.dirs[key.dir]), modules_(modules) {}

  Candidate run() {
    c_.layout = static_cast<Layout>(key_.layout);
    c_.best = key_.best;
    c_.checkpoint.format = layout_format(c_.layout);
    c_.checkpoint.step = key_.step;
    c_.checkpoint.run_dir = tree_.dirs[key_.run].path;
    c_.checkpoint.run = std::string(tree_.dirs[key_.run].name());
    c_.checkpoint.directory = key_.name == kNoDir;
    if (key_.name != kNoDir)
      c_.checkpoint.path = join_path(dir_.path, dir_.files[key_.name]);
    else
      c_.checkpoint.path = dir_.path;
    c_.primary = c_.checkpoint.path;
    switch (c_.layout) {
      case Layout::kSkrl:
        skrl();
        break;
      case Layout::kDcp:
        dcp();
        break;
      case Layout::kCosmosDcp:
        cosmos_dcp();
        break;
      case Layout::kCosmosPredict2:
        cosmos_predict2();
        break;
      case Layout::kCosmosPolicy:
        cosmos_policy();
        break;
      case Layout::kHf:
        hf();
        break;
      case Layout::kDeepSpeed:
        deepspeed();
        break;
      default:
        single();
        break;  // rsl_rl, rl_games, lightning
    }
    for (const auto& p : c_.parts) c_.checkpoint.files.push_back(p.path);
    return std::move(c_);
  }

 private:
  void add(std::string path, PartKind kind) { c_.parts.push_back({std::move(path), kind}); }
  void missing(const std::string& why) {
    if (c_.missing.empty()) c_.missing = why;
  }
  std::vector<std::uint32_t> children(std::uint32_t d) const {
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = 0; i < tree_.dirs.size(); ++i)
      if (tree_.dirs[i].parent == d) out.push_back(i);
    return out;
  }
  std::uint32_t child(std::uint32_t d, std::string_view name) const {
    for (std::uint32_t i : children(d))
      if (tree_.dirs[i].name() == name) return i;
    return kNoDir;
  }
  void pointer_in(std::uint32_t d, std::string_view file) {
    if (d != kNoDir && tree_.dirs[d].files.contains(file))
      c_.pointer = join_path(tree_.dirs[d].path, file);
  }

  void single() {
    c_.write_once = !key_.best && c_.layout != Layout::kLightning;
    add(c_.checkpoint.path, PartKind::kTorch);
  }

  // skrl: every module file of the step (store_separately) or of best_*; the set must have every
  // module any other step of this directory, or of the same directory in sibling runs, has.
  void skrl() {
    c_.write_once = !key_.best;
    const std::string_view ext = dir_.files[key_.name].ends_with(".pickle") ? ".pickle" : ".pt";
    std::map<std::string, std::string> mine;
    ModuleSet expected;
    if (!set_from_recognition(ext, mine, expected)) {
      mine.clear();
      expected.clear();
      for (std::uint32_t i : same_dir_of_sibling_runs())
        collect_modules(tree_.dirs[i], ext, i == key_.dir ? &mine : nullptr, expected);
    }
    std::string absent;
    for (const auto& m : expected)
      if (!mine.count(m)) absent += (absent.empty() ? "" : ", ") + m;
    if (!absent.empty())
      missing("module files missing (" + absent + ") that other saves of this run have");
    if (mine.empty()) return single();
    const auto policy = mine.find("policy");
    const auto agent = mine.find("agent");
    const std::string& head = policy != mine.end()  ? policy->second
                              : agent != mine.end() ? agent->second
                                                    : mine.begin()->second;
    c_.checkpoint.path = c_.primary = join_path(dir_.path, head);
    for (const auto& [m, f] : mine) add(join_path(dir_.path, f), PartKind::kTorch);
  }

  // This key's directory and the directories of the same name in sibling runs.
  std::vector<std::uint32_t> same_dir_of_sibling_runs() const {
    std::vector<std::uint32_t> out{key_.dir};
    const std::uint32_t gp = tree_.ancestor(key_.dir, 2);
    for (std::uint32_t i = 0; i < tree_.dirs.size() && gp != kNoDir; ++i)
      if (i != key_.dir && tree_.ancestor(i, 2) == gp && tree_.dirs[i].name() == dir_.name())
        out.push_back(i);
    return out;
  }

  // The set from the modules recognition saw (expected) and one stat per module for this step's
  // files, named as this key's own file names its step. false when that cannot decide it (no
  // record, too many modules, a file not there): then every name is read (collect_modules).
  bool set_from_recognition(std::string_view ext, std::map<std::string, std::string>& mine,
                            ModuleSet& expected) {
    if (!modules_) return false;
    for (std::uint32_t i : same_dir_of_sibling_runs()) {
      const SkrlModules& m = (*modules_)[i];
      if (m.overflow) return false;
      for (const auto& module : m.modules)
        if (module.ext == ext && module.best == key_.best) expected.insert(module.name);
    }
    const std::string_view own = dir_.files[key_.name];
    const std::string_view stem = own.substr(0, own.size() - ext.size());
    const std::string_view step = key_.best ? "" : stem.substr(stem.rfind('_'));  // "_<digits>"
    for (const auto& module : expected) {
      std::string file = (key_.best ? "best_" : "") + module + std::string(step) + std::string(ext);
      auto st = fs_.stat(join_path(dir_.path, file));
      if (!st || !st->is_regular) return false;
      mine.emplace(module, std::move(file));
    }
    return !mine.empty();
  }

  // Modules of `d`: those of this key's step (or best) into `mine`; every module into expected.
  void collect_modules(const ListedDir& d, std::string_view ext,
                       std::map<std::string, std::string>* mine, ModuleSet& expected) {
    std::string_view last;
    for (std::size_t i = 0; i < d.files.size(); ++i) {
      const std::string_view f = d.files[i];
      if (!f.ends_with(ext)) continue;
      const std::string_view stem = f.substr(0, f.size() - ext.size());
      const bool best = stem.starts_with("best_");
      if (best != key_.best) continue;
      std::string_view module = stem.substr(best ? 5 : 0);
      std::int64_t step = -1;
      if (!best) {
        const auto us = stem.rfind('_');
        if (us == std::string_view::npos || us == 0) continue;
        auto s = parse_digits(stem.substr(us + 1));
        module = stem.substr(0, us);
        if (!s || (module == "model" && ext == ".pt")) continue;
        step = *s;
      }
      if (module.empty()) continue;
      if (module != last && !expected.contains(module)) expected.emplace(module);
      last = module;  // a directory of one module's saves: one set lookup, not one per file
      if (mine && (best || step == key_.step)) (*mine)[std::string(module)] = std::string(f);
    }
  }

  void dcp() {
    c_.write_once = false;
    add(dir_.path, PartKind::kDcp);
    c_.primary = join_path(dir_.path, ".metadata");
  }

  void cosmos_dcp() {
    c_.write_once = false;
    for (auto part : kCosmosParts) {
      const std::uint32_t d = child(key_.dir, part);
      if (d == kNoDir)
        missing("no " + std::string(part) + "/ (save interrupted?)");
      else
        add(tree_.dirs[d].path, PartKind::kDcp);
    }
    c_.primary = join_path(join_path(dir_.path, "model"), ".metadata");
    pointer_in(dir_.parent, "latest_checkpoint.txt");
  }

  void cosmos_predict2() {
    const std::string_view file = dir_.files[key_.name];
    for (auto part : kCosmosParts) {
      const std::uint32_t d = child(dir_.parent, part);
      if (d == kNoDir || !tree_.dirs[d].files.contains(file))
        missing("no " + std::string(part) + "/" + std::string(file) + " (save interrupted?)");
      else
        add(join_path(tree_.dirs[d].path, file), PartKind::kTorch);
    }
  }

  struct Ranks {
    std::set<std::int64_t> files, markers;
    std::set<std::string> kinds;
    std::map<std::int64_t, std::set<std::string>> kinds_of;
  };
  static Ranks ranks_of(const ListedDir& d) {
    Ranks r;
    for (std::size_t i = 0; i < d.files.size(); ++i) {
      const std::string_view f = d.files[i];
      if (auto m = number_between(f, ".rank_", "_complete")) r.markers.insert(*m);
      const auto at = f.rfind("_rank_");
      if (at == std::string_view::npos || !f.ends_with(".pth")) continue;
      auto rank = parse_digits(f.substr(at + 6, f.size() - at - 6 - 4));
      if (!rank) continue;
      r.files.insert(*rank);
      r.kinds.insert(std::string(f.substr(0, at)));
      r.kinds_of[*rank].insert(std::string(f.substr(0, at)));
    }
    return r;
  }

  // cosmos-rl policy: cosmos_config, and for every saving rank all its .pth files and its
  // .rank_<r>_complete marker; as many ranks as other saves of this run have.
  void cosmos_policy() {
    c_.write_once = false;
    const Ranks r = ranks_of(dir_);
    std::size_t expected = std::max(r.files.size(), r.markers.size());
    const std::uint32_t checkpoints = tree_.ancestor(key_.dir, 2);
    for (std::uint32_t i = 0; i < tree_.dirs.size(); ++i)
      if (i != key_.dir && tree_.dirs[i].name() == "policy" && tree_.ancestor(i, 2) == checkpoints)
        expected = std::max(expected, ranks_of(tree_.dirs[i]).markers.size());
    if (!dir_.files.contains("cosmos_config")) missing("no cosmos_config");
    for (std::int64_t rank = 0; rank < static_cast<std::int64_t>(expected); ++rank) {
      const std::string rs = std::to_string(rank);
      if (!r.markers.count(rank)) missing("rank " + rs + " has no .rank_" + rs + "_complete");
      for (const auto& kind : r.kinds) {
        const std::string f = kind + "_rank_" + rs + ".pth";
        if (!dir_.files.contains(f))
          missing("no " + f);
        else
          add(join_path(dir_.path, f), PartKind::kTorch);
      }
      if (r.markers.count(rank))
        add(join_path(dir_.path, ".rank_" + rs + "_complete"), PartKind::kExists);
    }
    if (r.files.empty()) missing("no *_rank_<r>.pth files");
    c_.primary = join_path(dir_.path, ".rank_0_complete");
  }

  // HF Trainer (checkpoint-N: trainer_state.json is written last) and accelerate (checkpoint_N:
  // random_states_0.pkl last): every file and DCP directory inside is a part.
  void hf() {
    c_.write_once = false;
    const bool trainer = dir_.name().starts_with("checkpoint-");
    const char* marker = trainer ? "trainer_state.json" : "random_states_0.pkl";
    if (!dir_.files.contains(marker))
      missing(std::string("no ") + marker + " (written last; save interrupted?)");
    c_.primary = join_path(dir_.path, marker);
    const std::string prefix = dir_.path + "/";
    for (std::uint32_t i = 0; i < tree_.dirs.size(); ++i) {
      const ListedDir& d = tree_.dirs[i];
      if (i != key_.dir && !d.path.starts_with(prefix)) continue;
      const std::uint32_t p = d.parent;
      if (p != kNoDir && p != key_.dir && is_unit(tree_.dirs[p])) continue;  // inside a unit
      if (i != key_.dir && is_unit(d)) {
        add(d.path, PartKind::kDcp);
        continue;
      }
      hf_files(d);
    }
  }
  static bool is_unit(const ListedDir& d) {
    return d.files.contains(".metadata") || d.files.contains(".metadata.tmp");
  }
  void hf_files(const ListedDir& d) {
    for (std::size_t f = 0; f < d.files.size(); ++f) {
      const std::string_view n = d.files[f];
      std::string path = join_path(d.path, n);
      if (n.ends_with(".safetensors"))
        add(std::move(path), PartKind::kSafetensors);
      else if (n.ends_with(".safetensors.index.json") || n.ends_with(".bin.index.json"))
        add(std::move(path), PartKind::kShardIndex);
      else if (n.ends_with(".json"))
        add(std::move(path), PartKind::kJson);
      else if (n.ends_with(".pt") || n.ends_with(".pth") || n.ends_with(".bin") ||
               n.ends_with(".pkl"))
        add(std::move(path), PartKind::kTorch);
      else if (n.ends_with(".distcp")) {
        add(std::move(path), PartKind::kExists);
        missing(d.path + " has shards but no .metadata (save interrupted?)");
      }
    }
  }

  void deepspeed() {
    c_.write_once = false;
    for (std::size_t f = 0; f < dir_.files.size(); ++f)
      if (dir_.files[f].ends_with(".pt"))
        add(join_path(dir_.path, dir_.files[f]), PartKind::kTorch);
    if (c_.parts.empty()) missing("no *.pt files");
    pointer_in(dir_.parent, "latest");
    if (c_.pointer.empty())
      missing("no `latest` beside it (DeepSpeed writes it after every complete save)");
    if (!c_.parts.empty()) c_.primary = c_.parts.front().path;
  }

  const Tree& tree_;
  const Key& key_;
  CheckpointFs& fs_;
  const ListedDir& dir_;
  const std::vector<SkrlModules>* modules_;
  Candidate c_;
};

}  // namespace

Candidate materialize(const Tree& tree, const Key& key, CheckpointFs& fs,
                      const std::vector<SkrlModules>* skrl_modules) {
  return Materializer(tree, key, fs, skrl_modules).run();
}

std::string base_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::int64_t read_pointer_step(CheckpointFs& fs, const std::string& pointer) {
  auto text = fs.read_range(pointer, 0, 4096);
  if (!text) return -1;
  std::string s = *text;
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) || s.back() == '/'))
    s.pop_back();
  return step_in_name(base_of(s));
}

}  // namespace tv
