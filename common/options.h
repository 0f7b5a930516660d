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

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/did_you_mean.h"
#include "common/environment.h"
#include "common/exit_codes.h"
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
  kSeconds,  // a duration: a finite number of seconds in [min, max] (no unit suffix), or `words`
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
  double min = 0;  // kInt, kNumber, kSeconds
  double max = 0;
  std::vector<std::string> words = {};  // kChoice: the choices; kInt/kNumber/kSeconds: also taken
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
  // The value of an option whose row has a default (parse_options sets it): the default is the
  // row's alone, never repeated at the call. "" only for an option with no value and no default.
  std::string text(const std::string& name) const { return value_or(name, ""); }
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

// Unknown options and missing values are usage errors (exit 64; an unknown one names the known
// option nearest its spelling: did_you_mean); a value that is not what its row's type says is a
// configuration error (exit 78, one line naming its origin; a duration written with a unit,
// "5m", is told what it is in seconds).
Result<Options> parse_options(const std::vector<OptionSpec>& specs,
                              const std::vector<std::string>& args, const Environment& env,
                              ParseMode mode);

// Checks one value against its row: the error names `v.origin` (exit 78).
Status check_option_value(const OptionSpec& spec, const OptionValue& v);

// A kChoice option's word and what it means. A command's table of them is the one place its words
// become a type: the row's `.words` are made from it (words_of), and the value is read through it
// (choice_of), so the words, the row and the code that uses the value cannot drift apart.
template <class E>
struct Choice {
  const char* word;
  E value;
};

template <class E, std::size_t N>
std::vector<std::string> words_of(const Choice<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& c : table) out.emplace_back(c.word);
  return out;
}

// The option's value (its default included) as `E`: parse_options has checked it is one of the
// row's words; a row whose words are not the table's is a programming error, named (exit 78).
template <class E, std::size_t N>
Result<E> choice_of(const Options& o, const std::string& name, const Choice<E> (&table)[N]) {
  auto word = o.get_choice(name);
  if (!word) return word.error();
  for (const auto& c : table)
    if (*word == c.word) return c.value;
  return Error{ErrorKind::kConfig,
               "--" + name + "=\"" + *word + "\": not one of the words trainvisor reads"};
}

// "5m" -> 300, "1.5h" -> 5400, "30s" -> 30, "250ms" -> 0.25, "2d" -> 172800: a duration written
// with a unit, for the hint of a seconds option; nullopt for anything else.
std::optional<double> seconds_with_unit(const std::string& text);

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
