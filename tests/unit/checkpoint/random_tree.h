// Random checkpoint trees from the catalog's own name vocabulary, for the property test
// (tree_property_test.cc) and the fuzz harness (tests/fuzz/fuzz_checkpoint_tree.cc). A byte
// string decodes into a tree on the FakeCheckpointFs: every name a layout's `unit` describes
// (checkpoint/catalog.cc, its placeholders filled in) and every exact name recognition and
// materializing look for, as files (whole, cut off, empty), directories and symlinks (to files,
// to directories, to an ancestor, dangling), at any depth, the root included; so a name meant for
// a file is a directory as often as the reverse. run_every_lookup then runs what `run` and
// `checkpoint latest/watch` run on it and checks what must hold of any answer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/candidates.h"
#include "checkpoint/catalog.h"
#include "checkpoint/discovery.h"
#include "checkpoint/integrity.h"
#include "checkpoint/resume.h"
#include "fake_checkpoint_fs.h"
#include "pickle_writer.h"

namespace tv::testing {

// Names the code compares with exactly that the catalog's unit texts do not spell out.
inline constexpr std::string_view kExactNames[] = {"checkpoints",
                                                   "checkpoint",
                                                   "nn",
                                                   "policy",
                                                   "weights",
                                                   "context",
                                                   "model",
                                                   "optim",
                                                   "scheduler",
                                                   "trainer",
                                                   "latest",
                                                   "latest_checkpoint.txt",
                                                   "latest_checkpointed_iteration.txt",
                                                   "trainer_state.json",
                                                   "training_args.bin",
                                                   "model.safetensors",
                                                   "pytorch_model.bin",
                                                   "optimizer.pt",
                                                   "scheduler.pt",
                                                   "optimizer.bin",
                                                   "scheduler.bin",
                                                   "model.safetensors.index.json",
                                                   "pytorch_model.bin.index.json",
                                                   "random_states_0.pkl",
                                                   "custom_checkpoint_0.pkl",
                                                   "rng_state.pth",
                                                   "common.pt",
                                                   "metadata.json",
                                                   ".metadata",
                                                   ".metadata.tmp",
                                                   "__0_0.distcp",
                                                   "_CHECKPOINT_METADATA",
                                                   "_METADATA",
                                                   "cosmos_config",
                                                   ".rank_0_complete",
                                                   "policy_rank_0.pth",
                                                   "mp_rank_00",
                                                   "model_optim_rng.pt",
                                                   "pytorch_model_fsdp_0",
                                                   "optimizer_0",
                                                   "global_step10",
                                                   "last.ckpt",
                                                   "last-v1.ckpt",
                                                   "epoch=1-step=10.ckpt",
                                                   "x--step=10-consumed_samples=80.0-unfinished",
                                                   "2025-01-02_10-00-00_ppo",
                                                   "25-01-02_10-00-00-000001_PPO",
                                                   "20250102100000",
                                                   "Jan02_10-00-00",
                                                   "agent_10.pt",
                                                   "best_agent.pt",
                                                   "model_10.pt",
                                                   "a_10_steps.zip",
                                                   "a_replay_buffer_10_steps.pkl",
                                                   "10",
                                                   "10.orbax-checkpoint-tmp-1",
                                                   "iter_0000010",
                                                   "step-10",
                                                   "epoch_1",
                                                   "checkpoint-10",
                                                   "checkpoint_10"};

// The words of the catalog's unit texts that name a file or directory, placeholders (<t>, <09d>,
// <module>, *) still in them.
inline std::vector<std::string> catalog_name_patterns() {
  std::vector<std::string> out;
  for (const auto& e : catalog()) {
    std::string word;
    auto flush = [&] {
      const bool named = word.find_first_of("._<=-*") != std::string::npos;
      const bool alnum = word.find_first_of("abcdefghijklmnopqrstuvwxyz0123456789") != word.npos;
      if (named && alnum) out.push_back(word);
      word.clear();
    };
    for (const char c : e.unit) {
      if (c == '[' || c == ']') continue;  // last_<name>ep<e>rew[<r>].pth: both spellings
      if (std::string_view(" ,;(){}/").find(c) != std::string_view::npos)
        flush();
      else
        word += c;
    }
    flush();
  }
  return out;
}

// Reads the tree's decisions from a byte string; past its end every byte is 0.
class ByteSource {
 public:
  explicit ByteSource(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  std::uint8_t next() { return at_ < bytes_.size() ? bytes_[at_++] : 0; }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : (next() | next() << 8) % n; }
  bool done() const { return at_ >= bytes_.size(); }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

class RandomTree {
 public:
  RandomTree(FakeCheckpointFs& fs, std::string root) : fs_(fs), root_(std::move(root)) {
    patterns_ = catalog_name_patterns();
    for (const auto n : kExactNames) patterns_.emplace_back(n);
    fs_.add_dir(root_);
    dirs_.push_back(root_);
  }
  const std::vector<std::string>& patterns() const { return patterns_; }
  std::size_t entries() const { return entries_; }

  // One entry per step until the bytes run out (at most `most`).
  void build(ByteSource& in, std::size_t most) {
    for (std::size_t i = 0; i < most && !in.done(); ++i) add(in);
  }

  void add(ByteSource& in) {
    const std::string parent = dirs_[in.below(dirs_.size())];
    const std::string path = parent + "/" + name(in);
    const std::int64_t mtime = fs_.now() - static_cast<std::int64_t>(in.next() % 4) * 100 *
                                               FakeCheckpointFs::kSecond;  // 0: still settling
    ++entries_;
    switch (in.next() % 8) {
      case 0:
      case 1:
      case 2:
        return file(path, contents(in), mtime);
      case 3:
        return file(path, "", mtime);
      case 4:
      case 5:
        fs_.add_dir(path);
        dirs_.push_back(path);
        return;
      case 6: {  // to something already there (a directory, a file, a directory above it)
        const bool to_dir = files_.empty() || in.next() % 2 == 0;
        const std::string& target =
            to_dir ? dirs_[in.below(dirs_.size())] : files_[in.below(files_.size())];
        return fs_.add_symlink(path, in.next() % 2 ? target : relative(target));
      }
      default:  // dangling, or to itself
        return fs_.add_symlink(path, in.next() % 2 ? path : parent + "/gone");
    }
  }

 private:
  // A link target as a relative path is read from the link's directory by the real fs; the fake
  // takes it as given: a relative target is one more way to dangle.
  static std::string relative(const std::string& target) {
    const auto slash = target.rfind('/');
    return slash == std::string::npos ? target : target.substr(slash + 1);
  }
  void file(const std::string& path, std::string contents, std::int64_t mtime) {
    fs_.add_file(path, std::move(contents), mtime);
    files_.push_back(path);
  }

  std::string name(ByteSource& in) {
    const std::string& p = patterns_[in.below(patterns_.size())];
    std::string out;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i] == '*') {
        out += word(in);
      } else if (p[i] == '<' && p.find('>', i) != std::string::npos) {
        const auto end = p.find('>', i);
        out += placeholder(std::string_view(p).substr(i + 1, end - i - 1), in);
        i = end;
      } else {
        out += p[i];
      }
    }
    return out.empty() ? "x" : out;
  }
  static std::string word(ByteSource& in) {
    static constexpr std::string_view kWords[] = {
        "agent", "policy", "value", "model", "a_policy", "ppo", "", "x-y", "checkpoint"};
    return std::string(kWords[in.below(std::size(kWords))]);
  }
  static std::string number(ByteSource& in) {
    static constexpr std::string_view kNumbers[] = {
        "0", "1", "5", "10", "100", "150", "0000100", "999999999999999999", "99999999999999999999"};
    return std::string(kNumbers[in.below(std::size(kNumbers))]);
  }
  static std::string placeholder(std::string_view what, ByteSource& in) {
    if (what == "07d" || what == "09d") {
      std::string n = number(in);
      const std::size_t width = what == "07d" ? 7 : 9;
      return n.size() < width ? std::string(width - n.size(), '0') + n : n;
    }
    const bool words = what == "module" || what == "name" || what == "uid" || what == "prefix" ||
                       what == "output_dir" || what == "dir";
    return words ? word(in) : number(in);
  }
  std::string contents(ByteSource& in) {
    switch (in.next() % 8) {
      case 0:
        return make_zip();
      case 1: {  // a Lightning checkpoint with its global_step
        PickleWriter w;
        w.empty_dict().mark().str("global_step").integer(in.next()).setitems();
        return make_zip(w.stop());
      }
      case 2:
        return make_zip().substr(0, in.next() % 40);  // cut off
      case 3:
        return "global_step" + number(in);  // what `latest` and the trackers hold
      case 4:
        return R"({"global_step": )" + number(in) + "}";
      case 5:
        return make_dcp_metadata({{"__0_0.distcp", 0, 10}});
      case 6:
        return "0123456789";
      default: {
        std::string s;
        for (int i = in.next() % 16; i > 0; --i) s += static_cast<char>(in.next());
        return s;
      }
    }
  }

  FakeCheckpointFs& fs_;
  std::string root_;
  std::vector<std::string> patterns_;
  std::vector<std::string> dirs_;
  std::vector<std::string> files_;
  std::size_t entries_ = 0;
};

// What must hold of any answer: a checkpoint found lies in the tree, and so does its run.
// Returns "" or the first property broken.
inline std::string check_selection(FakeCheckpointFs& fs, const std::string& root,
                                   const Selection& s) {
  if (!s.checkpoint) return s.none != Selection::None::kFound ? "" : "kFound without a checkpoint";
  const Checkpoint& c = *s.checkpoint;
  if (!c.path.starts_with(root)) return "path outside the tree: " + c.path;
  if (!c.run_dir.starts_with(root)) return "run directory outside the tree: " + c.run_dir;
  if (!fs.stat(c.path)) return "path not there: " + c.path;
  return "";
}

// The lookups `run`, `checkpoint latest` and `checkpoint watch` make: each of `formats`, latest
// and best, and the watcher's pass (every candidate judged). "" or what broke.
inline std::string run_lookups(FakeCheckpointFs& fs, const std::string& root,
                               const std::vector<std::string>& formats) {
  for (const auto& format : formats)
    for (const Pick mode : {Pick::kLatest, Pick::kBest}) {
      ResumeRequest r{root, format, mode};
      r.settle = std::chrono::seconds(2);
      if (std::string bad = check_selection(fs, root, lookup_checkpoint(r, fs)); !bad.empty())
        return format + (mode == Pick::kBest ? " best: " : " latest: ") + bad;
    }
  const Tree tree = walk_tree(fs, root);
  std::string bad;
  each_candidate_oldest_first(
      fs, tree, "auto", [](const std::string&) { return false; },
      [&](const std::string& path, Candidate& c) {
        if (!path.starts_with(root) && bad.empty()) bad = "watcher: candidate outside: " + path;
        evaluate(c, fs, Judge{fs.now_ns(), 2 * FakeCheckpointFs::kSecond, {}});
      });
  return bad;
}

// Every --checkpoint-format name (and a glob).
inline std::vector<std::string> every_format() {
  std::vector<std::string> formats = {"auto", "glob:*/*.pt"};
  for (const auto& e : catalog()) formats.emplace_back(e.format);
  return formats;
}

inline std::string run_every_lookup(FakeCheckpointFs& fs, const std::string& root) {
  return run_lookups(fs, root, every_format());
}

}  // namespace tv::testing
