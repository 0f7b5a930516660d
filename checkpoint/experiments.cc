#include "checkpoint/experiments.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "common/escape.h"

namespace tv {
namespace {

// rl_games' run name: <name><pbt>_%d-%H-%M-%S (rl_games/common/a2c_common.py A2CBase.__init__);
// Isaac Lab sets it to %Y-%m-%d_%H-%M-%S, which leaves no name (scripts/reinforcement_learning/
// rl_games/train.py: the experiment is then the directory above, logs/rl_games/<config.name>).
std::string rl_games_name(std::string_view run) {
  std::size_t end = run.size(), groups = 0;
  while (end >= 3 && std::isdigit(static_cast<unsigned char>(run[end - 1])) &&
         std::isdigit(static_cast<unsigned char>(run[end - 2])) &&
         (run[end - 3] == '-' || run[end - 3] == '_')) {
    end -= 3;
    ++groups;
    if (run[end] == '_') break;
  }
  if (groups < 3 || end == 0 || run[end] != '_') return "";
  const std::string name(run.substr(0, end));
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '-'; })
             ? ""
             : name;
}

std::set<std::string> words(std::string_view text) {
  std::set<std::string> out;
  std::string word;
  for (const char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      out.insert(std::exchange(word, {}));
    }
  }
  if (!word.empty()) out.insert(word);
  return out;
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names)
    out += (out.empty() ? "" : ", ") + (n.empty() ? std::string("(the directory itself)") : n);
  return escape_control(out);
}

}  // namespace

std::string experiment_of(const Tree& tree, const Key& key) {
  const auto layout = static_cast<Layout>(key.layout);
  // The RL frameworks that put the experiment in the path; the others' runs are ordered as ever.
  if (layout != Layout::kSkrl && layout != Layout::kRslRl && layout != Layout::kRlGames) return "";
  const std::uint32_t run = key.run;
  if (run >= tree.dirs.size()) return "";
  const ListedDir& r = tree.dirs[run];
  const std::uint32_t up = r.parent;
  const std::string above = up == kNoDir ? "" : tree.dirs[up].rel;
  if (layout == Layout::kRlGames)
    if (std::string name = rl_games_name(r.name()); !name.empty())
      return above.empty() ? name : above + "/" + name;
  return above;
}

std::string experiment_for_task(const std::string& task, const std::vector<std::string>& seen) {
  const std::set<std::string> of_task = words(task);
  std::string best;
  std::size_t most = 0, ties = 0;
  for (const auto& e : seen) {
    const auto slash = e.rfind('/');
    const std::set<std::string> w = words(slash == std::string::npos ? e : e.substr(slash + 1));
    if (w.empty() || !std::includes(of_task.begin(), of_task.end(), w.begin(), w.end())) continue;
    if (w.size() == most) ++ties;
    if (w.size() > most) std::tie(best, most, ties) = std::tuple(e, w.size(), 0);
  }
  return ties == 0 ? best : "";
}

ExperimentWanted experiment_from_worker_argv(const std::vector<std::string>& argv) {
  static constexpr std::string_view kOverrides[] = {
      "agent.experiment_name=", "agent.agent.experiment.directory=", "agent.params.config.name="};
  ExperimentWanted w;
  auto value = [&](std::size_t& i, std::string_view opt, std::string& out) {
    const std::string_view a = argv[i];
    if (a == opt && i + 1 < argv.size()) return out = argv[++i], true;
    if (a.starts_with(opt) && a.size() > opt.size() && a[opt.size()] == '=')
      return out = std::string(a.substr(opt.size() + 1)), true;
    return false;
  };
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (value(i, "--experiment_name", w.name) || value(i, "--task", w.task)) continue;
    for (const auto o : kOverrides)
      if (std::string_view(argv[i]).starts_with(o)) w.name = argv[i].substr(o.size());
  }
  return w;
}

std::string keep_experiment(const Tree& tree, Keys& keys, const ExperimentWanted& wanted) {
  std::map<std::uint32_t, std::string> of_run;
  std::set<std::string> names;
  for (const Key& k : keys.keys)
    if (auto [it, added] = of_run.try_emplace(k.run); added)
      names.insert(it->second = experiment_of(tree, k));
  // One experiment: scoped only by an exact name, and not when the checkpoint directory is the
  // experiment itself (logs/rsl_rl/h1_rough given as --checkpoint-dir).
  if (names.size() < 2 && (wanted.name.empty() || names.empty() || names.begin()->empty()))
    return "";
  const std::vector<std::string> seen(names.begin(), names.end());
  std::string pick = wanted.name;
  if (pick.empty() && !wanted.task.empty()) pick = experiment_for_task(wanted.task, seen);
  if (pick.empty() || !names.contains(pick)) {
    const std::string why =
        pick.empty()
            ? (wanted.task.empty() ? "this job names no experiment (no --task, --experiment_name)"
                                   : "--task " + escape_control(wanted.task) +
                                         " matches none of them, or several alike")
            : "none is " + escape_control(pick);
    keys.keys.clear();
    return "runs of " + std::to_string(names.size()) + " experiment(s) under " +
           escape_control(tree.root) + ": " + listed(seen) + "; " + why +
           "; not resuming another experiment's checkpoint (pick one with "
           "--checkpoint-experiment NAME)";
  }
  std::erase_if(keys.keys, [&](const Key& k) { return of_run[k.run] != pick; });
  return "";
}

}  // namespace tv
