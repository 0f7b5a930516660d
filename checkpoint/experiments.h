// Experiments: a checkpoint directory that holds the runs of more than one experiment (Isaac Lab
// puts every task's runs side by side: logs/skrl/<agent.experiment.directory>/<run>/checkpoints/,
// logs/rsl_rl/<experiment_name>/<run>/, logs/rl_games/<config.name>/<run>/nn/; plain rl_games
// runs/<name>_<%d-%H-%M-%S>/nn/). The lookup picks within the experiment this job trains, or
// picks nothing and says why (docs/checkpoints.md, "Experiments").
#pragma once

#include <string>
#include <vector>

#include "checkpoint/candidates.h"
#include "checkpoint/tree_walk.h"

namespace tv {

struct ExperimentWanted {
  std::string name;  // exact: --checkpoint-experiment, or what the worker's arguments set
  std::string task;  // the worker's --task (Isaac Lab), matched by experiment_for_task
  bool any() const { return !name.empty() || !task.empty(); }
};

// The experiment of a key's run: the run directory's parent relative to the checkpoint
// directory (rl_games' plain runs/<name>_<stamp>: <name>); "" when the run directory is the
// checkpoint directory or directly in it (then the checkpoint directory is the experiment), and
// for every layout but skrl, rsl_rl and rl_games (their runs are ordered across directories).
std::string experiment_of(const Tree& tree, const Key& key);

// The experiment of `seen` that a --task names: every word of the experiment's last path
// component (split at '_', '-', '/', lower case) is a word of the task (Isaac-Velocity-Rough-H1-v0
// -> h1_rough, not h1_flat); of several, the one with the most words, when one alone has most.
// "" when none or a tie.
std::string experiment_for_task(const std::string& task, const std::vector<std::string>& seen);

// What the worker's command line says of its experiment, the way the frameworks read it:
// `--experiment_name X` (Isaac Lab rsl_rl, scripts/reinforcement_learning/rsl_rl/cli_args.py
// update_rsl_rl_cfg: the log root logs/rsl_rl/X), the Hydra overrides `agent.experiment_name=X`
// (rsl_rl), `agent.agent.experiment.directory=X` (skrl: logs/skrl/X) and
// `agent.params.config.name=X` (rl_games: logs/rl_games/X) as `name`; `--task T` as `task`.
// Both spellings, `--opt X` and `--opt=X`.
ExperimentWanted experiment_from_worker_argv(const std::vector<std::string>& argv);

// Keeps only the keys of the wanted experiment when the keys span more than one. "" when that
// worked or was not needed; else the one line why nothing can be picked (naming the experiments
// and --checkpoint-experiment), and `keys.keys` is left empty.
std::string keep_experiment(const Tree& tree, Keys& keys, const ExperimentWanted& wanted);

}  // namespace tv
