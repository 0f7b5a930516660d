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
#include <utility>
#include <vector>

#include "common/environment.h"
#include "common/result.h"

namespace tv {

// What kind of value an option takes; parse_options checks every value against it, whatever its
// origin (flag, TRAINVISOR_*, PET_*, default), and refuses a bad one with exit 78 naming the
// origin, the value and what was expected.
enum class OptionType {
  kFlag,     // no value on the command line; from the environment 1|true|yes|on|0|false|no|off
  kText,     // any text (a path, a template: its owner checks what the text means)
  kInt,      // an integer in [min, max], or one of `words`
  kNumber,   // a finite number in [min, max], or one of `words`
  kChoice,   // one of `words`
  kAddress,  // an IPv4 or IPv6 address (not a host name)
};

// One row of a command's option table: parsing, validation, `--help` and docs/options.md all
// come from it (format_help, format_markdown). Adding an option is adding a row.
struct OptionSpec {
  std::string name;  // canonical spelling with dashes, without "--"; "--a_b" is accepted too
  OptionType type = OptionType::kText;
  std::string help = {};
  std::optional<std::string> default_value = std::nullopt;
  double min = 0;  // kInt, kNumber
  double max = 0;
  std::vector<std::string> words = {};  // kChoice: the choices; kInt/kNumber: words also taken
  bool from_pet = false;                // also read PET_<NAME> (Kubeflow's torchrun variables)
  std::string short_name = {};          // a value-less "-m" for torchrun's `-m module`
  std::string metavar = {};             // the value in --help ("PATH"); default from the type
};

struct OptionValue {
  std::string value;
  std::string origin;  // "--nnodes", "TRAINVISOR_NNODES", "PET_NNODES" or "default"
};

class Options {
 public:
  Options() = default;
  explicit Options(std::vector<OptionSpec> specs) : specs_(std::move(specs)) {}

  std::optional<OptionValue> get(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  bool has(const std::string& name) const { return get(name).has_value(); }
  // A value-less flag, or a boolean from the environment (1/true/yes/on).
  bool flag(const std::string& name) const;
  // The value as the table's type; parse_options has checked it, so the only error left is a
  // value that is absent (no default): "--NAME is required" (exit 78).
  Result<long> get_int(const std::string& name) const;
  Result<double> get_double(const std::string& name) const;
  Result<std::string> get_choice(const std::string& name) const;

  // The row of `name` (nullptr for none).
  const OptionSpec* spec(const std::string& name) const;
  void set(const std::string& name, OptionValue v);
  std::vector<std::string> positional;  // the command and its arguments, or a subcommand's words

 private:
  std::vector<OptionSpec> specs_;
  std::vector<std::pair<std::string, OptionValue>> values_;
};

struct ParseMode {
  bool stop_at_command = false;  // first non-option word ends the options (run)
  bool use_env = false;          // TRAINVISOR_* / PET_* fallbacks
};

// Unknown options and missing values are usage errors (exit 64); a value that is not what its
// row's type says is a configuration error (exit 78, one line naming its origin).
Result<Options> parse_options(const std::vector<OptionSpec>& specs,
                              const std::vector<std::string>& args, const Environment& env,
                              ParseMode mode);

// Checks one value against its row: the error names `v.origin` (exit 78).
Status check_option_value(const OptionSpec& spec, const OptionValue& v);

// "nproc-per-node" -> "NPROC_PER_NODE"
std::string upper_snake(const std::string& name);

// The environment variables an option reads, in precedence order ("TRAINVISOR_X", "PET_X").
std::vector<std::string> option_env_names(const OptionSpec& spec);

// `--help` text for a table, one option per entry: spelling, value, default, range or choices,
// environment names, help.
std::string format_help(const std::vector<OptionSpec>& specs, bool use_env = false);

// The same table as Markdown (docs/options.md: `trainvisor __options-doc`).
std::string format_markdown(const std::vector<OptionSpec>& specs, bool use_env);

}  // namespace tv
