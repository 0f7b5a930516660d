// Command-line options, torchrun style, with the environment as a fallback.
//
// Precedence for each option: the flag (`--nproc-per-node 2`, `--nproc_per_node=2`), then
// `TRAINVISOR_<OPTION_IN_UPPER_SNAKE>`, then `PET_<OPTION>` for the options the Kubeflow operator
// sets, then the default. Every value remembers where it came from (`origin`), so an error can
// name the flag or variable the user has to fix.
//
// Parsing stops at `--` or, in `stop_at_command` mode, at the first word that is not an option
// (torchrun's `script.py args...`), so a torchrun command line moves over by changing its first
// word. Thread-compatible; no I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/result.h"

namespace tv {

struct OptionSpec {
  std::string name;  // canonical spelling with dashes, without the leading "--"
  bool takes_value = true;
  std::optional<std::string> default_value = std::nullopt;
  std::string help = {};
  bool from_pet = false;        // also read PET_<NAME> (Kubeflow's torchrun variables)
  std::string short_name = {};  // e.g. "m" for torchrun's `-m module`
};

struct OptionValue {
  std::string value;
  std::string origin;  // "--nnodes", "TRAINVISOR_NNODES", "PET_NNODES" or "default"
};

class Options {
 public:
  std::optional<OptionValue> get(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  bool has(const std::string& name) const { return get(name).has_value(); }
  // A value-less flag, or a boolean from the environment (1/true/yes/on).
  bool flag(const std::string& name) const;
  // Integer in [min, max]; the error names the origin, the value and the range (exit 78).
  Result<long> get_int(const std::string& name, long min, long max) const;
  // A finite number in [min, max] ("inf", "nan" and "1e20" for a duration are refused, exit 78).
  Result<double> get_double(const std::string& name, double min, double max) const;
  // A choice among `allowed`; the error lists them.
  Result<std::string> get_choice(const std::string& name,
                                 const std::vector<std::string>& allowed) const;

  void set(const std::string& name, OptionValue v);
  std::vector<std::string> positional;  // the command and its arguments, or a subcommand's words

 private:
  std::vector<std::pair<std::string, OptionValue>> values_;
};

struct ParseMode {
  bool stop_at_command = false;  // first non-option word ends the options (run)
  bool use_env = false;          // TRAINVISOR_* / PET_* fallbacks
};

// Unknown options and missing values are usage errors (exit 64).
Result<Options> parse_options(const std::vector<OptionSpec>& specs,
                              const std::vector<std::string>& args, const Environment& env,
                              ParseMode mode);

// "nproc-per-node" -> "NPROC_PER_NODE"
std::string upper_snake(const std::string& name);

// Usage text for a spec table, one option per line.
std::string format_help(const std::vector<OptionSpec>& specs);

}  // namespace tv
