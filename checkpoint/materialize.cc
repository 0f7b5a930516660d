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
  Materializer(const Tree& tree, const Key& key, CheckpointFs& fs, const Keys* recognized)
      : tree_(tree),
        key_(key),
        fs_(fs),
        dir_(tree.dirs[key.dir]),
        modules_(recognized ? &recognized->skrl_modules : nullptr),
        facts_(recognized && !recognized->facts.empty() ? &recognized->facts : nullptr) {}

  Candidate run() {
    c_.layout = static_cast<Layout>(key_.layout);
    c_.best = key_.best;
    c_.checkpoint.format = layout_format(c_.layout);
    c_.checkpoint.step = key_.step;
    c_.checkpoint.run_dir = tree_.dirs[key_.run].path;
    c_.checkpoint.run = std::string(tree_.dirs[key_.run].name());
    if (c_.checkpoint.run.empty()) {  // --checkpoint-dir is the run directory itself
      std::string root = tree_.dirs[key_.run].path;
      while (root.size() > 1 && root.back() == '/') root.pop_back();
      c_.checkpoint.run = base_of(root);
    }
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
      case Layout::kMegatron:
        megatron();
        break;
      case Layout::kNemo:
        nemo();
        break;
      case Layout::kTorchtune:
        torchtune();
        break;
      case Layout::kOrbax:
        orbax();
        break;
      case Layout::kSb3:
        sb3();
        break;
      case Layout::kLightning:
        single();
        unfinished_marker();
        break;
      case Layout::kVerl:
        verl();
        break;
      case Layout::kFairseq:
        c_.checkpoint.step = fairseq_updates(key_.step);
        single();
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
  const std::vector<std::uint32_t>& children(std::uint32_t d) const {
    return tree_.dirs[d].children;
  }
  // `d` and every directory below it, in the listing's order (ascending index): a save's own
  // directories only, never a pass over the whole tree per save.
  std::vector<std::uint32_t> subtree(std::uint32_t d) const {
    std::vector<std::uint32_t> out{d};
    for (std::size_t k = 0; k < out.size(); ++k)
      for (std::uint32_t i : children(out[k])) out.push_back(i);
    std::sort(out.begin(), out.end());
    return out;
  }
  std::uint32_t child(std::uint32_t d, std::string_view name) const {
    if (d == kNoDir) return kNoDir;  // above the root: only the root, whose name is ""
    for (std::uint32_t i : children(d))
      if (tree_.dirs[i].name() == name) return i;
    return kNoDir;
  }
  void pointer_in(std::uint32_t d, std::string_view file) {
    if (d != kNoDir && tree_.dirs[d].files.contains(file))
      c_.pointer = join_path(tree_.dirs[d].path, file);
  }

  // One file. Rewritten in place: best files, Lightning's, and the "last" of timm and fairseq.
  void single() {
    const bool last = key_.name != kNoDir && (dir_.files[key_.name] == "last.pth.tar" ||
                                              dir_.files[key_.name] == "checkpoint_last.pt");
    c_.write_once = !key_.best && c_.layout != Layout::kLightning && !last;
    add(c_.checkpoint.path, PartKind::kTorch);
  }

  // verl: global_step_<N>/<role>/<kind>_world_size_<W>_rank_<R>.pt, every rank writing its own
  // (fsdp_checkpoint_manager.py save_checkpoint); a save is complete when every role directory
  // holds every kind it has for every rank 0..W-1, and the tracker the trainer writes after it
  // (ray_trainer.py _save_checkpoint: latest_checkpointed_iteration.txt) is not behind.
  void verl() {
    c_.write_once = false;
    for (std::uint32_t i : children(key_.dir)) {
      verl_role(tree_.dirs[i]);
      for (std::uint32_t u : children(i))  // the Megatron backend: DCP directories (dist_ckpt)
        if (is_unit(tree_.dirs[u])) add(tree_.dirs[u].path, PartKind::kDcp);
    }
    for (std::size_t f = 0; f < dir_.files.size(); ++f)  // data.pt (the dataloader's state)
      if (dir_.files[f].ends_with(".pt"))
        add(join_path(dir_.path, dir_.files[f]), PartKind::kTorch);
    if (c_.parts.empty())
      missing("no <kind>_world_size_<W>_rank_<R>.pt shards and no DCP directory");
    else
      c_.primary = c_.parts.front().path;
    pointer_in(dir_.parent, "latest_checkpointed_iteration.txt");
  }
  void verl_role(const ListedDir& role) {
    std::set<std::string, std::less<>> kinds;
    std::int64_t world = 0;
    for (std::size_t f = 0; f < role.files.size(); ++f) {
      const std::string_view n = role.files[f];
      const auto at = n.rfind("_world_size_");
      const auto r = n.rfind("_rank_");
      if (at == std::string_view::npos || r == std::string_view::npos || r < at ||
          !n.ends_with(".pt"))
        continue;
      if (auto w = parse_digits(n.substr(at + 12, r - at - 12))) {
        kinds.emplace(n.substr(0, at));
        world = std::max(world, std::min<std::int64_t>(*w, 4096));
      }
    }
    for (const auto& kind : kinds)
      for (std::int64_t rank = 0; rank < world; ++rank) {
        const std::string f =
            kind + "_world_size_" + std::to_string(world) + "_rank_" + std::to_string(rank) + ".pt";
        if (role.files.contains(f))
          add(join_path(role.path, f), PartKind::kTorch);
        else
          missing("no " + join_path(role.path, f) + " (every rank writes its own shard)");
      }
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
    bool agents = false;  // beside agent_* files only agent_* are skrl's (recognize.cc)
    for (std::size_t i = 0; i < d.files.size() && !agents; ++i)
      agents = skrl_agent_file(d.files[i]);
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
      if (!is_module_name(module) || (agents && module != "agent")) continue;
      if (module != last && !expected.contains(module)) expected.emplace(module);
      last = module;  // a directory of one module's saves: one set lookup, not one per file
      if (mine && (best || step == key_.step)) (*mine)[std::string(module)] = std::string(f);
    }
  }

  void dcp() {
    c_.write_once = false;
    dcp_with_files_beside(key_.dir);
    c_.primary = join_path(dir_.path, ".metadata");
  }

  // A DCP directory and what frameworks save beside its .metadata: Megatron's common.pt
  // (dist_checkpointing save_common) and metadata.json (save_config), any other .pt/.json.
  void dcp_with_files_beside(std::uint32_t d) {
    const ListedDir& u = tree_.dirs[d];
    add(u.path, PartKind::kDcp);
    for (std::size_t f = 0; f < u.files.size(); ++f) {
      const std::string_view n = u.files[f];
      if (n.ends_with(".pt"))
        add(join_path(u.path, n), PartKind::kTorch);
      else if (n.ends_with(".json"))
        add(join_path(u.path, n), PartKind::kJson);
    }
  }

  // Megatron-LM iter_<07d>: torch_dist (DCP + common.pt + metadata.json, written last by
  // dist_checkpointing.save's save_config) or legacy (mp_rank_<tp>[_<pp>]/model_optim_rng.pt,
  // as many rank directories as other saves of the run have); the tracker
  // latest_checkpointed_iteration.txt, written by rank 0 after every rank saved, when it names an
  // iteration ("release" names none).
  void megatron() {
    c_.write_once = false;
    bool legacy = false;
    for (std::uint32_t i : children(key_.dir))
      legacy = legacy || tree_.dirs[i].name().starts_with("mp_rank_");
    if (!legacy) {
      dcp_with_files_beside(key_.dir);
      if (!dir_.files.contains("metadata.json"))
        missing(
            "no metadata.json (Megatron writes it after every shard; dist_checkpointing "
            "refuses a directory without it)");
      c_.primary = join_path(dir_.path, "metadata.json");
    } else {
      megatron_legacy();
    }
    const std::uint32_t save_dir = dir_.parent;
    if (save_dir != kNoDir &&
        tree_.dirs[save_dir].files.contains("latest_checkpointed_iteration.txt")) {
      const std::string tracker =
          join_path(tree_.dirs[save_dir].path, "latest_checkpointed_iteration.txt");
      if (read_pointer_step(fs_, tracker) >= 0) c_.pointer = tracker;
    }
  }

  // mp_rank_<tp>[_<pp>]/model_optim_rng.pt: as many rank directories as other saves of the run.
  void megatron_legacy() {
    const std::uint32_t mine = mp_rank_dirs(tree_, key_.dir), expected = most_mp_ranks();
    if (mine < expected)
      missing(std::to_string(mine) + " of the " + std::to_string(expected) +
              " mp_rank_* directories other saves have (save interrupted?)");
    for (std::uint32_t i : children(key_.dir)) {
      const ListedDir& r = tree_.dirs[i];
      if (!r.name().starts_with("mp_rank_")) continue;
      for (std::size_t f = 0; f < r.files.size(); ++f)
        if (r.files[f].ends_with(".pt")) add(join_path(r.path, r.files[f]), PartKind::kTorch);
      if (!r.files.contains("model_optim_rng.pt")) missing("no " + r.path + "/model_optim_rng.pt");
    }
    if (c_.parts.empty())
      missing("no mp_rank_*/model_optim_rng.pt");
    else
      c_.primary = c_.parts.front().path;
  }
  // The most mp_rank_* directories of a save beside this one (this one's too): counted by
  // recognition, else here.
  std::uint32_t most_mp_ranks() const {
    if (dir_.parent == kNoDir) return mp_rank_dirs(tree_, key_.dir);  // the root: none beside it
    if (facts_) return (*facts_)[dir_.parent].most_mp_ranks;
    std::uint32_t most = 0;
    for (std::uint32_t i : children(dir_.parent)) most = std::max(most, mp_rank_dirs(tree_, i));
    return most;
  }

  // NeMo: 1.x a DCP directory named <name>--...-step=N-...[.ckpt]; 2.0 the same name holding
  // weights/ (DCP) and context/. Complete: no `<name>-unfinished` beside it (NeMo's
  // ModelCheckpoint writes the marker before the save and removes it after), the DCP directory
  // with common.pt, and metadata.json (Megatron dist_checkpointing writes it last).
  void nemo() {
    c_.write_once = false;
    const std::uint32_t weights = is_unit(dir_) ? key_.dir : child(key_.dir, "weights");
    if (weights == kNoDir) {
      missing("no weights/ directory (save interrupted?)");
    } else {
      dcp_with_files_beside(weights);
      if (!tree_.dirs[weights].files.contains("metadata.json"))
        missing("no " + tree_.dirs[weights].path +
                "/metadata.json (written last; save interrupted?)");
      c_.primary = join_path(tree_.dirs[weights].path, ".metadata");
    }
    unfinished_marker();
  }

  // NeMo's marker (format_checkpoint_unfinished_marker_path): the path without .ckpt and -EMA,
  // plus -unfinished; complete = the marker is absent.
  void unfinished_marker() {
    std::string marker = c_.checkpoint.path;
    if (marker.ends_with(".ckpt")) marker.resize(marker.size() - 5);
    if (marker.ends_with("-EMA")) marker.resize(marker.size() - 4);
    marker += "-unfinished";
    const std::uint32_t holder = key_.name == kNoDir ? dir_.parent : key_.dir;
    if (holder == kNoDir || (facts_ && !(*facts_)[holder].unfinished)) return;
    if (tree_.dirs[holder].files.contains(base_of(marker)))
      missing(marker + " is there (NeMo removes it when the save has finished)");
  }

  // torchtune epoch_<N>/: every weight file, index and JSON inside.
  void torchtune() {
    c_.write_once = false;
    hf_files(dir_);
    c_.primary = c_.parts.empty() ? dir_.path : c_.parts.front().path;
  }

  // Orbax: a finished step has its final name (AtomicRenameTemporaryPath.finalize renames
  // <step>.orbax-checkpoint-tmp-<n>); _CHECKPOINT_METADATA and each item's _METADATA parse.
  void orbax() {
    c_.write_once = false;
    c_.primary = join_path(dir_.path, "_CHECKPOINT_METADATA");
    if (dir_.name().find(".orbax-checkpoint-tmp-") != std::string_view::npos)
      return missing(
          "a save in progress (Orbax renames <step>.orbax-checkpoint-tmp-<n> to <step> "
          "when it is complete)");
    if (!dir_.files.contains("_CHECKPOINT_METADATA")) missing("no _CHECKPOINT_METADATA");
    add(c_.primary, PartKind::kJson);
    for (std::uint32_t i : children(key_.dir)) {
      const ListedDir& item = tree_.dirs[i];
      if (item.name().find(".orbax-checkpoint-tmp-") != std::string_view::npos)
        missing(item.path + " is a temporary item (save in progress)");
      if (item.files.contains("_METADATA")) add(join_path(item.path, "_METADATA"), PartKind::kJson);
    }
  }

  // Stable-Baselines3 CheckpointCallback: the model zip, then (save_replay_buffer,
  // save_vecnormalize) <prefix>_replay_buffer_<N>_steps.pkl and
  // <prefix>_vecnormalize_<N>_steps.pkl; those are expected when another save of the directory has
  // them.
  void sb3() {
    const std::string_view file = dir_.files[key_.name];
    const std::string_view stem = file.substr(0, file.size() - 10);  // "_steps.zip"
    const std::string_view prefix = stem.substr(0, stem.rfind('_'));
    const std::string step(stem.substr(prefix.size() + 1));
    add(c_.checkpoint.path, PartKind::kTorch);
    for (std::string_view kind : {"replay_buffer_", "vecnormalize_"}) {
      const std::string head = std::string(prefix) + "_" + std::string(kind);
      const std::string mine = head + step + "_steps.pkl";
      bool any = false;
      for (std::size_t f = 0; f < dir_.files.size() && !any; ++f)
        any = dir_.files[f].starts_with(head) && dir_.files[f].ends_with("_steps.pkl");
      if (!any) continue;
      if (dir_.files.contains(mine))
        add(join_path(dir_.path, mine), PartKind::kTorch);
      else
        missing("no " + mine + " (other saves of this directory have one)");
    }
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
    r.markers = rank_markers(d);
    for (std::size_t i = 0; i < d.files.size(); ++i) {
      const std::string_view f = d.files[i];
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
    const std::size_t expected = std::max({r.files.size(), r.markers.size(), most_rank_markers()});
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

  // The most .rank_<r>_complete markers of a policy/ save of this run (this one's too): counted
  // by recognition, else here.
  std::size_t most_rank_markers() const {
    const std::uint32_t checkpoints = tree_.ancestor(key_.dir, 2);
    if (facts_ && checkpoints != kNoDir) return (*facts_)[checkpoints].most_rank_markers;
    std::size_t most = 0;
    for (std::uint32_t i = 0; i < tree_.dirs.size(); ++i)
      if (tree_.dirs[i].name() == "policy" && tree_.ancestor(i, 2) == checkpoints)
        most = std::max(most, rank_markers(tree_.dirs[i]).size());
    return most;
  }

  // Which of the two saved it: the content decides, the name (Trainer checkpoint-N, accelerate's
  // automatic checkpoint_N) only when the content does not tell. accelerate's save_state into
  // checkpoint-N (every Diffusers example script) has no Trainer file; a Trainer save writes
  // training_args.bin first (save_model) and rng_state*.pth, accelerate random_states_<p>.pkl
  // and optimizer.bin / scheduler.bin (src/accelerate/utils/constants.py).
  bool saved_by_trainer() const {
    if (dir_.files.contains("trainer_state.json") || dir_.files.contains("training_args.bin"))
      return true;
    bool accelerate = dir_.files.contains("optimizer.bin") || dir_.files.contains("scheduler.bin");
    for (std::size_t f = 0; f < dir_.files.size(); ++f) {
      if (dir_.files[f].starts_with("rng_state")) return true;
      accelerate = accelerate || dir_.files[f].starts_with("random_states_");
    }
    return !accelerate && dir_.name().starts_with("checkpoint-");
  }

  // HF Trainer (trainer_state.json is written last) and accelerate (random_states_0.pkl last):
  // every file and DCP directory inside is a part.
  void hf() {
    c_.write_once = false;
    const bool trainer = saved_by_trainer();
    const char* marker = trainer ? "trainer_state.json" : "random_states_0.pkl";
    if (!dir_.files.contains(marker))
      missing(std::string("no ") + marker + " (written last; save interrupted?)");
    c_.primary = join_path(dir_.path, marker);
    for (const std::uint32_t i : subtree(key_.dir)) {
      const ListedDir& d = tree_.dirs[i];
      const std::uint32_t p = d.parent;
      if (p != kNoDir && p != key_.dir && is_unit(tree_.dirs[p])) continue;  // inside a unit
      if (i != key_.dir && is_unit(d)) {
        add(d.path, PartKind::kDcp);
        continue;
      }
      hf_files(d);
    }
    if (!trainer) custom_objects();
  }

  // accelerate save_state writes custom_checkpoint_<i>.pkl for every registered object after
  // random_states_<p>.pkl, and load_state raises without them: a save needs as many as the other
  // saves of its directory have.
  void custom_objects() {
    auto count = [](const ListedDir& d) {
      std::size_t n = 0;
      while (d.files.contains("custom_checkpoint_" + std::to_string(n) + ".pkl")) ++n;
      return n;
    };
    const std::size_t mine = count(dir_);
    std::size_t expected = mine;
    if (dir_.parent != kNoDir)  // the saves beside it
      for (const std::uint32_t i : children(dir_.parent))
        if (i != key_.dir && number_between(tree_.dirs[i].name(), dir_.name().substr(0, 11), ""))
          expected = std::max(expected, count(tree_.dirs[i]));
    if (mine < expected)
      missing("custom_checkpoint_" + std::to_string(mine) +
              ".pkl missing (accelerate writes one per registered object after random_states; "
              "other saves have " +
              std::to_string(expected) + ")");
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
  const std::vector<DirFacts>* facts_;
  Candidate c_;
};

}  // namespace

Candidate materialize(const Tree& tree, const Key& key, CheckpointFs& fs, const Keys* recognized) {
  return Materializer(tree, key, fs, recognized).run();
}

std::uint32_t mp_rank_dirs(const Tree& tree, std::uint32_t d) {
  std::uint32_t n = 0;
  for (const std::uint32_t i : tree.dirs[d].children)
    if (tree.dirs[i].name().starts_with("mp_rank_")) ++n;
  return n;
}

std::set<std::int64_t> rank_markers(const ListedDir& d) {
  std::set<std::int64_t> markers;
  for (std::size_t i = 0; i < d.files.size(); ++i)
    if (auto m = number_between(d.files[i], ".rank_", "_complete")) markers.insert(*m);
  return markers;
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
