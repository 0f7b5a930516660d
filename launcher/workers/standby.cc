#include "launcher/workers/standby.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/exit_codes.h"

namespace tv {
namespace {

bool valid_module_name(const std::string& m) {
  if (m.empty() || m.front() == '.' || m.back() == '.' || m.find("..") != std::string::npos)
    return false;
  for (size_t i = 0; i < m.size(); ++i) {
    const char c = m[i];
    const bool start = i == 0 || m[i - 1] == '.';
    if (c == '.' || c == '_' || std::isalpha(static_cast<unsigned char>(c))) continue;
    if (!start && std::isdigit(static_cast<unsigned char>(c))) continue;
    return false;
  }
  return true;
}

}  // namespace

Result<WarmStandbyConfig> parse_warm_standby(WarmMode mode, const std::string& imports) {
  WarmStandbyConfig cfg;
  cfg.mode = mode;
  size_t from = 0;
  while (from <= imports.size() && !imports.empty()) {
    const size_t comma = std::min(imports.find(',', from), imports.size());
    std::string m = imports.substr(from, comma - from);
    if (!valid_module_name(m))
      return Error{ErrorKind::kConfig, "--warm-import=\"" + imports + "\": \"" + m +
                                           "\" is not a Python module name (expected A,B.C,...)"};
    if (std::find(cfg.imports.begin(), cfg.imports.end(), m) == cfg.imports.end())
      cfg.imports.push_back(m);
    from = comma + 1;
  }
  return cfg;
}

std::optional<PythonCommand> python_command(const std::vector<std::string>& argv) {
  if (argv.size() < 3 || argv[1] != "-u") return std::nullopt;
  if (argv[2] == "-m") {
    if (argv.size() < 4 || !valid_module_name(argv[3])) return std::nullopt;
    return PythonCommand{true, argv[3]};
  }
  if (!argv[2].ends_with(".py") || argv[2].starts_with("-")) return std::nullopt;
  return PythonCommand{false, argv[2]};
}

bool runs_python(const std::vector<std::string>& argv) {
  if (python_command(argv)) return true;
  if (argv.size() < 2) return false;
  return std::filesystem::path(argv[0]).filename().string().starts_with("python");
}

bool per_attempt_variable(const std::string& name) {
  static const std::set<std::string> kPerAttempt = {"MASTER_PORT",
                                                    "TORCHELASTIC_RESTART_COUNT",
                                                    "TORCHELASTIC_ERROR_FILE",
                                                    "TRAINVISOR_HEARTBEAT_FILE",
                                                    "TRAINVISOR_RESUME_CHECKPOINT",
                                                    "TRAINVISOR_STACKS_FILE",
                                                    "TORCH_FR_DUMP_TEMP_FILE"};
  return kPerAttempt.contains(name);
}

std::optional<std::string> import_env_difference(const Environment& standby,
                                                 const Environment& rank) {
  const auto& a = standby.vars();
  const auto& b = rank.vars();
  for (const auto& [k, v] : a) {
    if (per_attempt_variable(k)) continue;
    auto it = b.find(k);
    if (it == b.end() || it->second != v) return k;
  }
  for (const auto& [k, v] : b)
    if (!per_attempt_variable(k) && !a.contains(k)) return k;
  return std::nullopt;
}

std::string activation_message(const Environment& env, const Environment& launch_env,
                               const std::string& executable, const std::vector<std::string>& argv,
                               const std::string& cwd) {
  std::vector<std::string> orig = argv;
  if (!orig.empty()) orig.front() = executable;
  // sys.argv as the interpreter sets it: everything after `PY -u`.
  std::vector<std::string> py_argv(argv.begin() + std::min<size_t>(2, argv.size()), argv.end());
  nlohmann::json j = {{"env", env.vars()},
                      {"launch_env", launch_env.vars()},
                      {"argv", py_argv},
                      {"orig_argv", orig},
                      {"cwd", cwd}};
  // Invalid UTF-8 in a variable must not throw: replace it (the comparison already ran on bytes).
  const std::string body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return std::to_string(body.size()) + "\n" + body;
}

void StandbyPool::started(int local_rank, pid_t pid, Environment env) {
  slots_.at(static_cast<size_t>(local_rank)) = Slot{pid, std::move(env), State::kStarting};
}

void StandbyPool::ready(pid_t pid) {
  for (auto& s : slots_)
    if (s && s->pid == pid) s->state = State::kReady;
}

std::optional<int> StandbyPool::rank_of(pid_t pid) const {
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i] && slots_[i]->pid == pid) return static_cast<int>(i);
  return std::nullopt;
}

void StandbyPool::forget(pid_t pid) {
  if (auto r = rank_of(pid)) slots_[static_cast<size_t>(*r)].reset();
}

std::optional<StandbyPool::Cold> StandbyPool::exited(pid_t pid, const std::string& why) {
  auto r = rank_of(pid);
  if (!r) return std::nullopt;
  slots_[static_cast<size_t>(*r)].reset();
  return cold(*r, "died", "its standby ended before it was used (" + why + ")");
}

StandbyPool::Cold StandbyPool::cold(int local_rank, const std::string& kind, std::string reason,
                                    pid_t discard) {
  const bool first = said_.insert({local_rank, kind}).second;
  return Cold{std::move(reason), first, discard};
}

std::variant<pid_t, StandbyPool::Cold> StandbyPool::take(int local_rank,
                                                         const Environment& rank_env) {
  auto& slot = slots_.at(static_cast<size_t>(local_rank));
  if (disabled_) return cold(local_rank, "disabled", *disabled_);
  if (!slot) return cold(local_rank, "none", "no standby (none prepared yet, or it ended)");
  if (slot->state != State::kReady)
    return cold(local_rank, "not-ready", "its standby has not finished its imports yet");
  if (auto var = import_env_difference(slot->env, rank_env)) {
    const pid_t pid = slot->pid;
    slot.reset();
    return cold(local_rank, "env", "its standby's import-time environment differs (" + *var + ")",
                pid);
  }
  const pid_t pid = slot->pid;
  slot.reset();
  return pid;
}

std::vector<int> StandbyPool::empty_ranks() const {
  std::vector<int> out;
  if (disabled_) return out;
  for (size_t i = 0; i < slots_.size(); ++i)
    if (!slots_[i]) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<pid_t> StandbyPool::pids() const {
  std::vector<pid_t> out;
  for (const auto& s : slots_)
    if (s) out.push_back(s->pid);
  return out;
}

}  // namespace tv
