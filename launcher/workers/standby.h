// Warm standbys, the pure part (docs/standby.md): which commands may use one, whether a standby's
// import-time environment is the rank's, the activation message, and the per-rank pool that
// decides "warm or cold" and says each reason for a cold start once. No I/O; the processes
// themselves are StandbyProcess (standby_process.h), owned by the Supervisor.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "common/environment.h"
#include "common/result.h"

namespace tv {

enum class WarmMode { kOff, kOn, kAuto };

struct WarmStandbyConfig {
  WarmMode mode = WarmMode::kOff;
  std::vector<std::string> imports = {"torch"};  // what a standby imports before it is ready
};

// --warm-standby (read as WarmMode by its option's words) and --warm-import A,B: an error (78)
// names the option and the value.
Result<WarmStandbyConfig> parse_warm_standby(WarmMode mode, const std::string& imports);

// The shapes build_worker_argv makes for Python: [PY, -u, SCRIPT.py, ARGS...] and
// [PY, -u, -m, MODULE, ARGS...]. Anything else (--no-python, other flags) is not warmable.
struct PythonCommand {
  bool module = false;
  std::string target;  // the script path or the module name
};
std::optional<PythonCommand> python_command(const std::vector<std::string>& argv);
// Whether the workers run a Python interpreter: the shapes above, or a command whose first word's
// base name starts with "python" (`run -- python3 train.py`, `--no-python -- python3.11 -m pkg`,
// Isaac Sim's `python.sh`). Such workers get the stacks hook and their flight-recorder dumps are
// read with the same interpreter; only the shapes above are warmable.
bool runs_python(const std::vector<std::string>& argv);

// Variables that change from one attempt to the next and that nothing reads at import time;
// every other variable of a standby's environment must equal the rank's.
bool per_attempt_variable(const std::string& name);
// The first variable (name) whose value differs between the standby's import-time environment and
// the rank's, ignoring per-attempt variables; nullopt when they are the same.
std::optional<std::string> import_env_difference(const Environment& standby,
                                                 const Environment& rank);

// "<length>\n<json>": what the bootstrap (standby_bootstrap.py) reads before it runs the command.
// `env` is the rank's; `launch_env` the one the standby was started with (the bootstrap applies
// what changed since, an interpreter wrapper's exports: docs/standby.md). `argv` is the worker's
// full command line; argv[0] is replaced by `executable`, as exec would.
std::string activation_message(const Environment& env, const Environment& launch_env,
                               const std::string& executable, const std::vector<std::string>& argv,
                               const std::string& cwd);

// One standby per local rank. The Supervisor asks take() at each start: a ready standby with the
// rank's import-time environment, or the reason to start cold (log it when `first` is true: each
// reason is said once per rank).
class StandbyPool {
 public:
  enum class State { kStarting, kReady };
  struct Slot {
    pid_t pid = -1;
    Environment env;  // the import-time environment it was started with
    State state = State::kStarting;
  };
  struct Cold {
    std::string reason;
    bool first = false;  // log it (once per reason and rank)
    pid_t discard = -1;  // a standby that can never serve this rank (forgotten): kill it
  };

  explicit StandbyPool(int local_ranks) : slots_(static_cast<size_t>(local_ranks)) {}

  void started(int local_rank, pid_t pid, Environment env);
  void ready(pid_t pid);
  // A standby ended before it was used: forgotten; the reason is said once.
  std::optional<Cold> exited(pid_t pid, const std::string& why);
  // Decides for one rank; on success the slot is emptied and its pid returned.
  std::variant<pid_t, Cold> take(int local_rank, const Environment& rank_env);
  // Ranks that have no standby (prepare one for each).
  std::vector<int> empty_ranks() const;
  std::vector<pid_t> pids() const;
  std::optional<int> rank_of(pid_t pid) const;
  void forget(pid_t pid);
  // Turns the pool off for good (an import failed, priorities cannot be restored).
  void disable(std::string why) { disabled_ = std::move(why); }
  const std::optional<std::string>& disabled() const { return disabled_; }

 private:
  Cold cold(int local_rank, const std::string& kind, std::string reason, pid_t discard = -1);

  std::vector<std::optional<Slot>> slots_;
  std::set<std::pair<int, std::string>> said_;  // (rank, reason kind) already logged
  std::optional<std::string> disabled_;
};

}  // namespace tv
