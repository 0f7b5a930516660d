// Recognition: one pass over the walked tree, one Key per candidate (candidates.h). The naming
// rules and their sources are in docs/checkpoints.md.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <tuple>

#include "checkpoint/candidates.h"
#include "checkpoint/lightning_step.h"
#include "checkpoint/names.h"

namespace tv {
namespace {

using Names = std::vector<std::string_view>;

bool is_hf_name(std::string_view n) {
  return number_between(n, "checkpoint-", "") || number_between(n, "checkpoint_", "");
}

bool has_hf_content(const ListedDir& d) {
  static constexpr std::array<std::string_view, 9> kFiles = {
      "trainer_state.json", "training_args.bin", "model.safetensors",
      "pytorch_model.bin",  "optimizer.pt",      "scheduler.pt",
      "optimizer.bin",      "scheduler.bin",     "model.safetensors.index.json"};
  for (std::size_t i = 0; i < d.files.size(); ++i) {
    const auto f = d.files[i];
    if (std::find(kFiles.begin(), kFiles.end(), f) != kFiles.end()) return true;
    if (f.starts_with("random_states_") || f.starts_with("rng_state")) return true;
  }
  for (std::size_t i = 0; i < d.subdirs.size(); ++i) {
    const auto s = d.subdirs[i];
    if (s.starts_with("pytorch_model_fsdp_") || s.starts_with("optimizer_") ||
        s.starts_with("global_step"))
      return true;
  }
  return false;
}

// What one pass over a directory's file names says.
struct Facts {
  bool dcp = false;         // .metadata, .metadata.tmp or *.distcp
  bool orbax = false;       // _CHECKPOINT_METADATA
  bool megatron = false;    // metadata.json or common.pt (Megatron dist_checkpointing)
  bool weights = false;     // *.safetensors, *.bin, *.pt (torchtune epoch_N)
  bool unfinished = false;  // a NeMo <name>-unfinished marker
};

Facts facts_of(const ListedDir& d) {
  Facts x;
  for (std::size_t i = 0; i < d.files.size(); ++i) {
    const auto f = d.files[i];
    if (f.size() < 3) continue;
    const char last = f.back();
    if (last == 'a' && (f == ".metadata" || f == ".metadata.tmp")) x.dcp = true;
    if (last == 'p' && (f.ends_with(".distcp") || f == ".metadata.tmp")) x.dcp = true;
    if (last == 'A' && f == "_CHECKPOINT_METADATA") x.orbax = true;
    if (f == "metadata.json" || f == "common.pt") x.megatron = true;
    if (f.ends_with(".safetensors") || f.ends_with(".bin") || f.ends_with(".pt")) x.weights = true;
    if (last == 'd' && f.ends_with("-unfinished")) x.unfinished = true;
  }
  return x;
}

bool has_subdir(const ListedDir& d, std::string_view prefix) {
  for (std::size_t i = 0; i < d.subdirs.size(); ++i)
    if (d.subdirs[i].starts_with(prefix)) return true;
  return false;
}

constexpr std::string_view kOrbaxTmp = ".orbax-checkpoint-tmp-";

// rl_games: the epoch of `last_<name>_ep_<e>_rew_<r>` (periodic) or `last_<name>ep<e>rew<r>`
// (the final max_epochs save): the digits before the last "rew" that follow "ep"; -1 if none.
std::int64_t rl_games_epoch(std::string_view n) {
  if (!n.starts_with("last_")) return -1;
  for (auto at = n.rfind("rew"); at != std::string_view::npos && at > 5;
       at = n.rfind("rew", at - 1)) {
    std::size_t end = at;
    if (n[end - 1] == '_') --end;
    std::size_t begin = end;
    while (begin > 5 && std::isdigit(static_cast<unsigned char>(n[begin - 1]))) --begin;
    std::size_t ep = begin;
    if (ep > 0 && n[ep - 1] == '_') --ep;  // _ep_<e>_rew_ (periodic) or ep<e>rew (final)
    if (begin == end || ep < 7 || n.substr(ep - 2, 2) != "ep") continue;
    if (auto e = parse_digits(n.substr(begin, end - begin))) return *e;
  }
  return -1;
}

// rl_games' max_frames save: last_<name>_frame_<f>_rew_...
bool rl_games_frame_save(std::string_view stem) {
  const auto at = stem.rfind("_frame_");
  if (at == std::string_view::npos) return false;
  std::size_t end = at + 7;
  while (end < stem.size() && std::isdigit(static_cast<unsigned char>(stem[end]))) ++end;
  return end > at + 7 && stem.substr(end).starts_with("_rew");
}

// A per-rank shard (<kind>_rank_<r>.pt, verl's <kind>_world_size_<w>_rank_<r>.pt): a part of a
// save of every rank, never a save by itself, and its rank is no step.
bool is_rank_shard(std::string_view module) {
  return module == "rank" || module.ends_with("_rank");
}

bool is_cosmos_part(std::string_view n) {
  return n == "model" || n == "optim" || n == "scheduler" || n == "trainer";
}

class Recognizer {
 public:
  Recognizer(const Tree& tree, std::uint32_t mask, CheckpointFs& fs, KeysWanted wanted)
      : tree_(tree),
        mask_(mask),
        fs_(fs),
        all_(wanted == KeysWanted::kAll),
        stamp_dir_(tree.dirs.size(), kNoDir),
        stamp_ns_(tree.dirs.size(), 0),
        top_(all_ ? 0 : tree.dirs.size(), kNoTop),
        modules_(tree.dirs.size()),
        facts_(tree.dirs.size()),
        in_unit_(tree.dirs.size(), false),
        unit_(tree.dirs.size(), false) {
    for (std::uint32_t i = 0; i < tree.dirs.size(); ++i) {  // parents come before children
      const auto& d = tree.dirs[i];
      if (d.parent == kNoDir) continue;
      if (auto ns = run_stamp_ns(d.name())) {
        stamp_dir_[i] = i;
        stamp_ns_[i] = *ns;
      } else {
        stamp_dir_[i] = stamp_dir_[d.parent];
        stamp_ns_[i] = stamp_ns_[d.parent];
      }
    }
  }

  Keys run() {
    // At most one key per file and per directory: reserved once, so the array is never copied.
    std::size_t most = 0;
    for (const auto& d : tree_.dirs) most += d.files.size() + 1;
    keys_.reserve(all_ ? most : top_.size());
    for (std::uint32_t i = 0; i < tree_.dirs.size(); ++i) directory(i);
    count_ranks();
    if (!all_)
      for (const std::uint32_t t : top_)
        if (t != kNoTop) keys_.push_back(tops_[t]);
    run_ns_.assign(tree_.dirs.size(), 0);
    for (std::uint32_t i = 0; i < tree_.dirs.size(); ++i)
      if (stamped(i)) run_ns_[i] = stamp_ns_[i];
    date_unstamped_runs();
    return {std::move(keys_), std::move(run_ns_), std::move(modules_), std::move(facts_)};
  }

 private:
  bool on(Layout l) const { return (mask_ & bit(l)) != 0; }
  std::string_view name(std::uint32_t d) const {
    return d == kNoDir ? std::string_view() : tree_.dirs[d].name();
  }
  std::uint32_t up(std::uint32_t d, int n) const { return tree_.ancestor(d, n); }
  bool stamped(std::uint32_t run) const { return stamp_dir_[run] == run; }

  // The run of a candidate whose container directory is `c`. A container above the walked root
  // (kNoDir: a Lightning .ckpt, a DCP or Orbax directory at the top of --checkpoint-dir) is the
  // root: the run directory is never outside the tree, so every index into the per-directory
  // arrays (stamp_dir_, top_, run_ns_) is a directory of the tree.
  void set_run(Key& k, std::uint32_t c) {
    if (c == kNoDir) c = kRoot;
    if (stamp_dir_[c] != kNoDir) {
      k.run = stamp_dir_[c];
      return;
    }
    const auto n = name(c);
    k.run = (n == "checkpoints" || n == "checkpoint" || n == "nn") && tree_.dirs[c].parent != kNoDir
                ? tree_.dirs[c].parent
                : c;
  }

  void emit(Layout l, std::uint32_t dir, std::uint32_t name_index, std::int64_t step,
            std::uint32_t container, bool best = false, std::uint8_t rank = 0) {
    Key k;
    k.layout = static_cast<std::uint8_t>(l);
    k.dir = dir;
    k.name = name_index;
    k.step = step;
    k.best = best;
    k.rank = rank;
    set_run(k, container);
    unstamped_ = unstamped_ || !stamped(k.run);
    if (all_) return keys_.push_back(k);
    if (best) return;
    std::uint32_t& t = top_[k.run];
    if (t == kNoTop) {
      t = static_cast<std::uint32_t>(tops_.size());
      tops_.push_back(k);
    } else if (newer_in_run(tree_, k, tops_[t])) {
      tops_[t] = k;
    }
  }

  // The skrl module a file names, recorded once per directory (one comparison for a directory of
  // one module's saves).
  void module(std::uint32_t dir, std::string_view name, std::string_view ext, bool best) {
    if (dir == last_.dir && name == last_.name && ext == last_.ext && best == last_.best) return;
    last_ = {dir, name, ext, best};
    SkrlModules& m = modules_[dir];
    if (m.overflow) return;
    for (const auto& known : m.modules)
      if (known.name == name && known.ext == ext && known.best == best) return;
    if (m.modules.size() == SkrlModules::kMost) {
      m.overflow = true;
      m.modules.clear();
      return;
    }
    m.modules.push_back({std::string(name), ext, best});
  }

  // A directory that is one checkpoint: what is below it is part of it.
  void claim(std::uint32_t i) { unit_[i] = true; }

  void directory(std::uint32_t i) {
    const ListedDir& d = tree_.dirs[i];
    const auto n = d.name();
    const std::uint32_t p = d.parent, gp = up(i, 2);
    if (p != kNoDir && (in_unit_[p] || is_claimed(p))) {
      in_unit_[i] = true;
      return;
    }
    if (is_hf_name(name(p)) || is_hf_name(name(gp))) return;  // inside an HF checkpoint
    if (is_hf_name(n) && has_hf_content(d)) {
      if (on(Layout::kHf)) emit(Layout::kHf, i, kNoDir, step_in_name(n), p);
      return;
    }
    if (auto s = number_between(n, "global_step", "")) {
      if (on(Layout::kDeepSpeed)) emit(Layout::kDeepSpeed, i, kNoDir, *s, p);
      return;
    }
    if (auto s = number_between(n, "global_step_", ""); s && d.subdirs.contains("actor")) {
      claim(i);  // the rank shards inside are parts of it
      if (on(Layout::kVerl)) emit(Layout::kVerl, i, kNoDir, *s, p);
      return;
    }
    const Facts f = facts_of(d);
    facts_[i].unfinished = f.unfinished;
    if (f.orbax || n.find(kOrbaxTmp) != std::string_view::npos) return orbax(i, n, p);
    // (dist_checkpointing.save writes common.pt first, metadata.json last; a DCP directory alone
    // named iter_* is plain DCP)
    if (number_between(n, "iter_", "") && (f.megatron || has_subdir(d, "mp_rank_")))
      return megatron(i, n, p);
    if (number_after(n, "step=") >= 0 && (f.dcp || d.subdirs.contains("weights")))
      return nemo(i, n, p);
    if (f.dcp) return dcp_unit(i, n, p);
    if (f.weights && number_between(n, "epoch_", "") && !d.subdirs.contains("policy")) {
      claim(i);
      if (on(Layout::kTorchtune)) emit(Layout::kTorchtune, i, kNoDir, step_in_name(n), p);
      return;
    }
    if (name(p) == "checkpoints" && is_cosmos_part(n)) {
      if (n == "model" && on(Layout::kCosmosPredict2)) cosmos_predict2(i, p);
      if (n != "model" || on(Layout::kCosmosPredict2)) return;
    }
    if (n == "policy" &&
        (number_between(name(p), "step_", "") || number_between(name(p), "epoch_", ""))) {
      if (on(Layout::kCosmosPolicy))
        emit(Layout::kCosmosPolicy, i, kNoDir, step_in_name(name(p)), up(i, 2));
      return;
    }
    files(i);
  }

  bool is_claimed(std::uint32_t d) const { return unit_[d]; }

  // What every save of a directory is held to by the others beside it (DirFacts), in one pass:
  // materializing each of 10,000 saves read every directory of the tree again (quadratic).
  void count_ranks() {
    const bool megatron = on(Layout::kMegatron), cosmos = on(Layout::kCosmosPolicy);
    if (!megatron && !cosmos) return;
    for (std::uint32_t i = 0; i < tree_.dirs.size(); ++i) {
      const ListedDir& d = tree_.dirs[i];
      if (d.parent == kNoDir) continue;
      if (megatron) raise(facts_[d.parent].most_mp_ranks, mp_rank_dirs(tree_, i));
      const std::uint32_t gp = up(i, 2);
      if (cosmos && gp != kNoDir && d.name() == "policy")
        raise(facts_[gp].most_rank_markers, rank_markers(d).size());
    }
  }
  static void raise(std::uint32_t& most, std::size_t n) {
    most = std::max(most, static_cast<std::uint32_t>(n));
  }

  // Orbax CheckpointManager: <step>/ or <prefix>_<step>/ holding _CHECKPOINT_METADATA; a
  // <step>.orbax-checkpoint-tmp-<n> directory is a save in progress (materialize says so).
  void orbax(std::uint32_t i, std::string_view n, std::uint32_t p) {
    claim(i);
    if (!on(Layout::kOrbax)) return;
    const auto tmp = n.find(kOrbaxTmp);
    emit(Layout::kOrbax, i, kNoDir, step_in_name(n.substr(0, tmp)), p);
  }

  // Megatron-LM iter_<07d>: torch_dist (files in it) or legacy (mp_rank_* directories).
  void megatron(std::uint32_t i, std::string_view n, std::uint32_t p) {
    claim(i);
    if (on(Layout::kMegatron)) emit(Layout::kMegatron, i, kNoDir, step_in_name(n), p);
  }

  // NeMo: the step is the number after step= (consumed_samples=M.0 comes after it).
  void nemo(std::uint32_t i, std::string_view n, std::uint32_t p) {
    claim(i);
    if (on(Layout::kNemo)) emit(Layout::kNemo, i, kNoDir, step_in_name(n), p);
  }

  void dcp_unit(std::uint32_t i, std::string_view n, std::uint32_t p) {
    claim(i);
    if (is_cosmos_part(n) && number_between(name(p), "iter_", "")) {
      if (n == "model" && on(Layout::kCosmosDcp))
        emit(Layout::kCosmosDcp, p, kNoDir, step_in_name(name(p)), tree_.dirs[p].parent);
      return;
    }
    if (on(Layout::kDcp)) emit(Layout::kDcp, i, kNoDir, step_in_name(n), p);
  }

  void cosmos_predict2(std::uint32_t i, std::uint32_t checkpoints) {
    const ListedDir& d = tree_.dirs[i];
    for (std::uint32_t f = 0; f < d.files.size(); ++f)
      if (auto s = number_between(d.files[f], "iter_", ".pt"))
        emit(Layout::kCosmosPredict2, i, f, *s, checkpoints);
  }

  void files(std::uint32_t i) {
    const ListedDir& d = tree_.dirs[i];
    const bool nn = d.name() == "nn";
    agent_mode_ = -1;
    later_ = {};
    for (std::uint32_t f = 0; f < d.files.size(); ++f) {
      const std::string_view n = d.files[f];
      if (n.starts_with("checkpoint") && n.ends_with(".pt") && fairseq(i, f, n)) continue;
      if (n.ends_with(".pt") || n.ends_with(".pickle"))
        torch_rl(i, f, n);
      else if (n.ends_with(".ckpt"))
        lightning(i, f, n);
      else if (nn && n.ends_with(".pth"))
        rl_games(i, f, n);
      else if (n.ends_with("_steps.zip"))
        sb3(i, f, n);
      else if (n.ends_with(".pth.tar"))
        timm(i, f, n);
    }
    // Saves whose step is the newest save beside them (written last, named without a step).
    if (later_.rl_games_frame != kNoDir)
      emit(Layout::kRlGames, i, later_.rl_games_frame, std::max<std::int64_t>(later_.rl_games, 0),
           i, false, 2);
    if (later_.fairseq_last != kNoDir)
      emit(Layout::kFairseq, i, later_.fairseq_last, later_.fairseq, i, false, 1);
  }

  // fairseq (checkpoint_utils.py save_checkpoint): checkpoint<E>.pt at the end of epoch E,
  // checkpoint_<E>_<U>.pt after U updates within it, checkpoint_last.pt a copy of the newest,
  // checkpoint_best.pt and checkpoint.best_<metric>_<v>.pt the best. Ordered by (E, U), the end of
  // an epoch after its updates (fairseq_step). false: not a fairseq name.
  bool fairseq(std::uint32_t i, std::uint32_t f, std::string_view n) {
    const std::string_view stem = n.substr(0, n.size() - 3);
    std::int64_t step = -1;
    if (stem == "checkpoint_last") {
      if (on(Layout::kFairseq)) later_.fairseq_last = f;
      return true;
    }
    if (stem == "checkpoint_best" || stem.starts_with("checkpoint.best_")) {
      if (on(Layout::kFairseq)) emit(Layout::kFairseq, i, f, -1, i, true);
      return true;
    }
    if (auto e = number_between(stem, "checkpoint", "")) {
      step = fairseq_step(*e, -1);
    } else if (stem.starts_with("checkpoint_")) {
      const std::string_view rest = stem.substr(11);
      const auto us = rest.find('_');
      if (us == std::string_view::npos) return false;
      const auto e = parse_digits(rest.substr(0, us)), u = parse_digits(rest.substr(us + 1));
      if (!e || !u) return false;
      step = fairseq_step(*e, *u);
    } else {
      return false;
    }
    if (step < 0 || !on(Layout::kFairseq)) return true;
    later_.fairseq = std::max(later_.fairseq, step);
    emit(Layout::kFairseq, i, f, step, i);
    return true;
  }

  // timm CheckpointSaver: last.pth.tar (renamed from tmp.pth.tar after every epoch), then
  // checkpoint-<E>.pth.tar a hard link of it, recovery-<E>-<B>.pth.tar within an epoch,
  // model_best.pth.tar the best. Within one epoch: recovery, then checkpoint-<E>, then last.
  void timm(std::uint32_t i, std::uint32_t f, std::string_view n) {
    if (!on(Layout::kTimm)) return;
    const std::string_view stem = n.substr(0, n.size() - 8);  // ".pth.tar"
    if (stem == "model_best") return emit(Layout::kTimm, i, f, -1, i, true);
    if (stem == "last") {
      const std::int64_t epoch = torch_int_field(fs_, join_path(tree_.dirs[i].path, n), "epoch");
      return emit(Layout::kTimm, i, f, epoch, i, false, 2);
    }
    if (auto e = number_between(stem, "checkpoint-", ""))
      return emit(Layout::kTimm, i, f, *e, i, false, 1);
    if (stem.starts_with("recovery-")) {
      const std::string_view rest = stem.substr(9);
      if (auto e = parse_digits(rest.substr(0, rest.find('-')))) emit(Layout::kTimm, i, f, *e, i);
    }
  }

  // skrl writes either one agent_<t> file per save or one file per module (store_separately),
  // never both in one directory: beside agent_* files, only agent_* and best_agent.* are its.
  bool agent_mode(const ListedDir& d) {
    if (agent_mode_ < 0) {
      agent_mode_ = 0;
      for (std::size_t f = 0; f < d.files.size() && agent_mode_ == 0; ++f)
        agent_mode_ = skrl_agent_file(d.files[f]) ? 1 : 0;
    }
    return agent_mode_ == 1;
  }

  void torch_rl(std::uint32_t i, std::uint32_t f, std::string_view n) {
    const std::string_view stem = n.substr(0, n.rfind('.'));
    const std::string_view ext = n.substr(stem.size()) == ".pt" ? ".pt" : ".pickle";
    if (stem.starts_with("best_") && stem.size() > 5) {
      if (!on(Layout::kSkrl) || !skrl_claims(stem.substr(5), tree_.dirs[i])) return;
      module(i, stem.substr(5), ext, true);
      return emit(Layout::kSkrl, i, f, -1, i, true);
    }
    const auto us = stem.rfind('_');
    if (us == std::string_view::npos || us == 0) return;
    const auto step = parse_digits(stem.substr(us + 1));
    if (!step) return;
    if (is_rank_shard(stem.substr(0, us))) return;
    const bool rsl = stem.substr(0, us) == "model" && ext == ".pt";
    const Layout l = rsl ? Layout::kRslRl : Layout::kSkrl;
    if (!on(l)) return;
    if (!rsl && !skrl_claims(stem.substr(0, us), tree_.dirs[i])) return;
    if (!rsl) module(i, stem.substr(0, us), ext, false);
    emit(l, i, f, *step, i);
  }

  bool skrl_claims(std::string_view module_name, const ListedDir& d) {
    if (!is_module_name(module_name)) return false;
    return module_name == "agent" || !agent_mode(d);
  }

  // Stable-Baselines3 CheckpointCallback: <prefix>_<N>_steps.zip.
  void sb3(std::uint32_t i, std::uint32_t f, std::string_view n) {
    if (!on(Layout::kSb3)) return;
    const std::string_view stem = n.substr(0, n.size() - 10);  // "_steps.zip"
    const auto us = stem.rfind('_');
    if (us == std::string_view::npos || us == 0) return;
    if (const auto step = parse_digits(stem.substr(us + 1))) emit(Layout::kSb3, i, f, *step, i);
  }

  // rl_games a2c_common.py train: last_<name>_ep_<e>_rew_<r> every save_freq epochs; at the end
  // last_<name>_ep_<e>_rew__<r>_ (max_epochs), last_<name>_frame_<f>_rew__<r>_ (max_frames: its
  // step is the highest epoch beside it, emitted after the pass) or last_<name>_custom_stop_ep_<e>
  // (stop_fn), each after that epoch's periodic save; best <name>.
  void rl_games(std::uint32_t i, std::uint32_t f, std::string_view n) {
    if (!on(Layout::kRlGames)) return;
    const std::string_view stem = n.substr(0, n.size() - 4);
    if (!stem.starts_with("last_")) return emit(Layout::kRlGames, i, f, -1, i, true);  // best
    if (const auto at = stem.rfind("_custom_stop_ep_"); at != std::string_view::npos) {
      if (auto ep = parse_digits(stem.substr(at + 16))) {
        later_.rl_games = std::max(later_.rl_games, *ep);
        emit(Layout::kRlGames, i, f, *ep, i, false, 1);
      }
      return;
    }
    const std::int64_t ep = rl_games_epoch(stem);
    if (ep < 0) {
      if (rl_games_frame_save(stem)) later_.rl_games_frame = f;
      return;
    }
    later_.rl_games = std::max(later_.rl_games, ep);
    emit(Layout::kRlGames, i, f, ep, i, false, stem.ends_with("_") ? 1 : 0);
  }

  void lightning(std::uint32_t i, std::uint32_t f, std::string_view n) {
    if (!on(Layout::kLightning)) return;
    const std::string_view stem = n.substr(0, n.size() - 5);
    std::int64_t version = 0;
    std::string_view base = stem;
    if (const auto v = stem.rfind("-v"); v != std::string_view::npos) {
      if (auto num = parse_digits(stem.substr(v + 2))) {
        version = *num;
        base = stem.substr(0, v);
      }
    }
    const auto rank = static_cast<std::uint8_t>(std::min<std::int64_t>(version, 100));
    if (base == "last") {
      // Written after the step's own file: its step is in its content (global_step).
      const std::int64_t step = lightning_global_step(fs_, join_path(tree_.dirs[i].path, n));
      return emit(Layout::kLightning, i, f, step, up(i, 1), false,
                  static_cast<std::uint8_t>(101 + rank));
    }
    std::int64_t step = number_after(stem, "step=");
    if (step < 0) step = number_after(stem, "epoch=");
    // A custom filename ('ckpt-{step}' with auto_insert_metric_name=False): the global_step
    // Lightning wrote into it, else the name's last number; never the name's string order.
    if (step < 0) step = lightning_global_step(fs_, join_path(tree_.dirs[i].path, n));
    if (step < 0) step = step_in_name(base);
    emit(Layout::kLightning, i, f, step, up(i, 1), false, rank);
  }

  // Runs without a time in their name: the mtime of their highest-step candidate.
  void date_unstamped_runs() {
    if (!unstamped_) return;  // every run has its time in its name: no pass over the keys
    std::vector<std::uint32_t> top(tree_.dirs.size(), kNoDir);
    for (std::uint32_t k = 0; k < keys_.size(); ++k) {  // (kNewestPerRun: one key per run)
      const Key& key = keys_[k];
      if (stamped(key.run) || key.best) continue;
      auto& t = top[key.run];
      if (t == kNoDir || std::tie(key.step, key.rank) > std::tie(keys_[t].step, keys_[t].rank))
        t = k;
    }
    for (std::uint32_t r = 0; r < top.size(); ++r) {
      if (top[r] == kNoDir) continue;
      const Key& key = keys_[top[r]];
      const ListedDir& d = tree_.dirs[key.dir];
      const std::string path = key.name == kNoDir ? d.path : join_path(d.path, d.files[key.name]);
      if (auto st = fs_.stat(path)) run_ns_[r] = st->mtime_ns;
    }
  }

  static constexpr std::uint32_t kNoTop = 0xFFFFFFFF;
  static constexpr std::uint32_t kRoot = 0;  // Tree::dirs[0]: the root, when anything was listed
  struct LastModule {
    std::uint32_t dir = kNoDir;
    std::string_view name, ext;
    bool best = false;
  };

  const Tree& tree_;
  std::uint32_t mask_;
  CheckpointFs& fs_;
  bool all_;
  std::vector<std::uint32_t> stamp_dir_;
  std::vector<std::int64_t> stamp_ns_;
  std::vector<Key> keys_;
  std::vector<std::uint32_t> top_;  // kNewestPerRun: by run directory, its index in tops_
  std::vector<Key> tops_;
  std::vector<SkrlModules> modules_;
  std::vector<DirFacts> facts_;
  std::vector<bool> in_unit_;  // below a directory that is one checkpoint
  std::vector<bool> unit_;     // directories that are one checkpoint each
  int agent_mode_ = -1;        // files(): -1 not known yet, 0/1
  // files(): saves named without their step, emitted after the pass with the newest step beside
  // them (rl_games' _frame_ save, fairseq's checkpoint_last.pt).
  struct Later {
    std::uint32_t rl_games_frame = kNoDir;
    std::int64_t rl_games = -1;
    std::uint32_t fairseq_last = kNoDir;
    std::int64_t fairseq = -1;
  };
  Later later_;
  LastModule last_;
  std::vector<std::int64_t> run_ns_;
  bool unstamped_ = false;
};

}  // namespace

bool newer_in_run(const Tree& tree, const Key& a, const Key& b) {
  if (std::tie(a.step, a.rank) != std::tie(b.step, b.rank))
    return std::tie(a.step, a.rank) > std::tie(b.step, b.rank);
  if (a.dir != b.dir) return tree.dirs[a.dir].path > tree.dirs[b.dir].path;
  if (a.name == kNoDir || b.name == kNoDir) return a.name < b.name;
  return tree.dirs[a.dir].files[a.name] > tree.dirs[b.dir].files[b.name];
}

Keys recognize(const Tree& tree, std::uint32_t layouts, CheckpointFs& fs, KeysWanted wanted) {
  return Recognizer(tree, layouts, fs, wanted).run();
}

}  // namespace tv
