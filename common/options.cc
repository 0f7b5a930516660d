#include "common/options.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "common/escape.h"
#include "common/exit_codes.h"
#include "common/parse_number.h"

namespace tv {
namespace {

std::string normalize(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

const OptionSpec* find_spec(const std::vector<OptionSpec>& specs, const std::string& name) {
  for (const auto& s : specs)
    if (s.name == name) return &s;
  return nullptr;
}

const OptionSpec* find_short(const std::vector<OptionSpec>& specs, const std::string& word) {
  if (word.size() < 2 || word[0] != '-' || word[1] == '-') return nullptr;
  for (const auto& s : specs)
    if (!s.short_name.empty() && !s.takes_value && word.substr(1) == s.short_name) return &s;
  return nullptr;
}

Error usage(const std::string& msg) { return Error{exit_code::kUsage, msg}; }

std::string describe(const OptionValue& v) {
  if (v.origin == "default") return "the default";
  return v.origin;
}

// Consumes one option at args[i]; advances i. Returns an error for unknown/missing.
Status take_option(const std::vector<OptionSpec>& specs, const std::vector<std::string>& args,
                   size_t& i, Options& out) {
  std::string word = args[i].substr(2);
  std::optional<std::string> inline_value;
  if (auto eq = word.find('='); eq != std::string::npos) {
    inline_value = word.substr(eq + 1);
    word = word.substr(0, eq);
  }
  const std::string name = normalize(word);
  const OptionSpec* spec = find_spec(specs, name);
  if (!spec) return usage("unknown option --" + word + " (see --help)");
  if (!spec->takes_value) {
    if (inline_value) return usage("option --" + word + " takes no value");
    out.set(name, OptionValue{"1", "--" + name});
    ++i;
    return ok_status();
  }
  if (!inline_value) {
    if (i + 1 >= args.size()) return usage("option --" + word + " expects a value");
    inline_value = args[++i];
  }
  out.set(name, OptionValue{*inline_value, "--" + name});
  ++i;
  return ok_status();
}

void fill_from_env(const std::vector<OptionSpec>& specs, const Environment& env, Options& out) {
  for (const auto& s : specs) {
    if (out.has(s.name)) continue;
    const std::string tv_var = "TRAINVISOR_" + upper_snake(s.name);
    if (auto v = env.get(tv_var); v && !v->empty()) {
      out.set(s.name, OptionValue{*v, tv_var});
      continue;
    }
    if (!s.from_pet) continue;
    const std::string pet_var = "PET_" + upper_snake(s.name);
    if (auto v = env.get(pet_var); v && !v->empty()) out.set(s.name, OptionValue{*v, pet_var});
  }
}

void fill_defaults(const std::vector<OptionSpec>& specs, Options& out) {
  for (const auto& s : specs)
    if (!out.has(s.name) && s.default_value)
      out.set(s.name, OptionValue{*s.default_value, "default"});
}

}  // namespace

std::string upper_snake(const std::string& name) {
  std::string out;
  for (char c : name)
    out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::optional<OptionValue> Options::get(const std::string& name) const {
  for (const auto& [k, v] : values_)
    if (k == name) return v;
  return std::nullopt;
}

std::string Options::value_or(const std::string& name, const std::string& fallback) const {
  auto v = get(name);
  return v ? v->value : fallback;
}

bool Options::flag(const std::string& name) const {
  auto v = get(name);
  if (!v) return false;
  std::string s = v->value;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

void Options::set(const std::string& name, OptionValue v) {
  for (auto& [k, old] : values_)
    if (k == name) {
      old = std::move(v);
      return;
    }
  values_.emplace_back(name, std::move(v));
}

Result<long> Options::get_int(const std::string& name, long min, long max) const {
  auto v = get(name);
  if (!v) return Error{exit_code::kConfig, "--" + name + " is required"};
  if (auto out = parse_integer<long>(v->value, min, max)) return *out;
  std::ostringstream msg;
  msg << describe(*v) << "=\"" << escape_control(v->value) << "\": expected an integer from " << min
      << " to " << max;
  return Error{exit_code::kConfig, msg.str()};
}

Result<double> Options::get_double(const std::string& name, double min, double max) const {
  auto v = get(name);
  if (!v) return Error{exit_code::kConfig, "--" + name + " is required"};
  if (auto out = parse_finite(v->value, min, max)) return *out;
  std::ostringstream msg;
  msg << describe(*v) << "=\"" << escape_control(v->value) << "\": expected a number from " << min
      << " to " << max;
  return Error{exit_code::kConfig, msg.str()};
}

Result<std::string> Options::get_choice(const std::string& name,
                                        const std::vector<std::string>& allowed) const {
  auto v = get(name);
  if (!v) return Error{exit_code::kConfig, "--" + name + " is required"};
  if (std::find(allowed.begin(), allowed.end(), v->value) != allowed.end()) return v->value;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : "|") + a;
  return Error{exit_code::kConfig,
               describe(*v) + "=\"" + escape_control(v->value) + "\": expected one of " + list};
}

Result<Options> parse_options(const std::vector<OptionSpec>& specs,
                              const std::vector<std::string>& args, const Environment& env,
                              ParseMode mode) {
  Options out;
  size_t i = 0;
  while (i < args.size()) {
    const std::string& a = args[i];
    if (a == "--") {
      out.positional.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (a.size() > 2 && a.starts_with("--")) {
      auto st = take_option(specs, args, i, out);
      if (!st) return st.error();
      continue;
    }
    if (const OptionSpec* sh = find_short(specs, a)) {
      out.set(sh->name, OptionValue{"1", a});
      ++i;
      continue;
    }
    if (mode.stop_at_command) {
      out.positional.assign(args.begin() + static_cast<long>(i), args.end());
      break;
    }
    out.positional.push_back(a);
    ++i;
  }
  if (mode.use_env) fill_from_env(specs, env, out);
  fill_defaults(specs, out);
  return out;
}

std::string format_help(const std::vector<OptionSpec>& specs) {
  std::ostringstream out;
  for (const auto& s : specs) {
    out << "  --" << s.name << (s.takes_value ? " V" : "");
    if (s.default_value) out << " (default " << *s.default_value << ")";
    out << "\n      " << s.help << "\n";
  }
  return out.str();
}

}  // namespace tv
