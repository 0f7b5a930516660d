#include "common/options.h"

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <cctype>
#include <cmath>
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
    if (!s.short_name.empty() && s.type == OptionType::kFlag && word.substr(1) == s.short_name)
      return &s;
  return nullptr;
}

std::string describe(const OptionValue& v) {
  if (v.origin == "default") return "the default";
  return v.origin;
}

Error usage(const std::string& msg) { return Error{ErrorKind::kUsage, msg}; }

Error required(const std::string& name) {
  return Error{ErrorKind::kConfig, "--" + name + " is required"};
}

bool listed(const std::vector<std::string>& words, const std::string& v) {
  return std::find(words.begin(), words.end(), v) != words.end();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// 1/true/yes/on: true, 0/false/no/off: false, anything else: nullopt.
std::optional<bool> boolean(const std::string& text) {
  const std::string s = lower(text);
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  return std::nullopt;
}

// 86400 as "86400", 0.001 as "0.001", 1e6 as "1000000".
std::string number_text(double x) {
  std::ostringstream out;
  if (std::fabs(x) < 1e15 && x == std::floor(x))
    out << static_cast<long long>(x);
  else
    out << x;
  return out.str();
}

std::string joined(const std::vector<std::string>& words) {
  std::string list;
  for (const auto& w : words) list += (list.empty() ? "" : "|") + w;
  return list;
}

// What a row accepts, in words: the tail of an error ("expected ...") and of its help.
std::string expected(const OptionSpec& s) {
  const std::string range = " from " + number_text(s.min) + " to " + number_text(s.max);
  const std::string also = s.words.empty() ? "" : ", or " + joined(s.words);
  switch (s.type) {
    case OptionType::kFlag:
      return "1|true|yes|on or 0|false|no|off";
    case OptionType::kText:
      return "text";
    case OptionType::kInt:
      return "an integer" + range + also;
    case OptionType::kNumber:
      return "a number" + range + also;
    case OptionType::kSeconds:
      return "a number of seconds" + range + " (as 90 or 0.5, no unit)" + also;
    case OptionType::kChoice:
      return "one of " + joined(s.words);
    case OptionType::kAddress:
      return "an IPv4 or IPv6 address";
  }
  return "";
}

Error bad_value(const OptionValue& v, const std::string& what) {
  return Error{ErrorKind::kConfig,
               describe(v) + "=\"" + escape_control(v.value) + "\": expected " + what};
}

// A duration with a unit given to a seconds option: what it is in seconds.
Error bad_seconds(const OptionValue& v, const OptionSpec& s) {
  Error e = bad_value(v, expected(s));
  if (auto x = seconds_with_unit(v.value))
    e.message += ": " + escape_control(v.value) + " is " + number_text(*x) + " seconds";
  return e;
}

std::vector<std::string> names_of(const std::vector<OptionSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) out.push_back(s.name);
  return out;
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
  if (!spec)
    return usage("unknown option --" + word + did_you_mean(name, names_of(specs), "--") +
                 " (see --help)");
  if (spec->type == OptionType::kFlag) {
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
    for (const auto& var : option_env_names(s))
      if (auto v = env.get(var); v && !v->empty()) {
        out.set(s.name, OptionValue{*v, var});
        break;
      }
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
  return v && boolean(v->value).value_or(false);
}

void Options::set(const std::string& name, OptionValue v) {
  for (auto& [k, old] : values_)
    if (k == name) {
      old = std::move(v);
      return;
    }
  values_.emplace_back(name, std::move(v));
}

const OptionSpec* Options::spec(const std::string& name) const { return find_spec(specs_, name); }

Result<long> Options::get_int(const std::string& name) const {
  auto v = get(name);
  if (!v) return required(name);
  const OptionSpec* s = spec(name);
  const double lo = s ? s->min : 0, hi = s ? s->max : 0;
  if (auto out = parse_integer<long>(v->value, static_cast<long>(lo), static_cast<long>(hi)))
    return *out;
  return bad_value(*v, s ? expected(*s) : "an integer");
}

Result<double> Options::get_double(const std::string& name) const {
  auto v = get(name);
  if (!v) return required(name);
  const OptionSpec* s = spec(name);
  if (auto out = parse_finite(v->value, s ? s->min : 0, s ? s->max : 0)) return *out;
  if (s && s->type == OptionType::kSeconds) return bad_seconds(*v, *s);
  return bad_value(*v, s ? expected(*s) : "a number");
}

Result<std::string> Options::get_choice(const std::string& name) const {
  auto v = get(name);
  if (!v) return required(name);
  if (auto st = spec(name) ? check_option_value(*spec(name), *v) : ok_status(); !st)
    return st.error();
  return v->value;
}

Status check_option_value(const OptionSpec& spec, const OptionValue& v) {
  if (listed(spec.words, v.value) && spec.type != OptionType::kFlag) return ok_status();
  switch (spec.type) {
    case OptionType::kText:
      return ok_status();
    case OptionType::kFlag:
      if (boolean(v.value)) return ok_status();
      break;
    case OptionType::kInt:
      if (parse_integer<long>(v.value, static_cast<long>(spec.min), static_cast<long>(spec.max)))
        return ok_status();
      break;
    case OptionType::kNumber:
      if (parse_finite(v.value, spec.min, spec.max)) return ok_status();
      break;
    case OptionType::kSeconds:
      if (parse_finite(v.value, spec.min, spec.max)) return ok_status();
      return bad_seconds(v, spec);
    case OptionType::kChoice:
      break;
    case OptionType::kAddress: {
      boost::system::error_code ec;
      boost::asio::ip::make_address(v.value, ec);
      if (!ec) return ok_status();
      break;
    }
  }
  return bad_value(v, expected(spec));
}

Result<Options> parse_options(const std::vector<OptionSpec>& specs,
                              const std::vector<std::string>& args, const Environment& env,
                              ParseMode mode) {
  Options out(specs);
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
  for (const auto& s : specs)
    if (auto v = out.get(s.name))
      if (auto st = check_option_value(s, *v); !st) return st.error();
  return out;
}

std::optional<double> seconds_with_unit(const std::string& text) {
  static const std::pair<const char*, double> kUnits[] = {
      {"ms", 0.001}, {"s", 1}, {"sec", 1}, {"m", 60}, {"min", 60}, {"h", 3600}, {"d", 86400}};
  const auto at = text.find_first_not_of("0123456789.");
  if (at == 0 || at == std::string::npos) return std::nullopt;
  const auto number = parse_finite(text.substr(0, at), 0, 1e12);
  if (!number) return std::nullopt;
  const std::string unit = lower(text.substr(at));
  for (const auto& [name, factor] : kUnits)
    if (unit == name) return *number * factor;
  return std::nullopt;
}

std::vector<std::string> option_env_names(const OptionSpec& spec) {
  std::vector<std::string> names = {"TRAINVISOR_" + upper_snake(spec.name)};
  if (spec.from_pet) names.push_back("PET_" + upper_snake(spec.name));
  return names;
}

namespace {

std::string metavar(const OptionSpec& s) {
  if (!s.metavar.empty()) return s.metavar;
  switch (s.type) {
    case OptionType::kFlag:
      return "";
    case OptionType::kInt:
      return "N";
    case OptionType::kNumber:
      return "X";
    case OptionType::kSeconds:
      return "SECONDS";
    case OptionType::kChoice:
      return joined(s.words);
    case OptionType::kAddress:
      return "ADDR";
    case OptionType::kText:
      break;
  }
  return "V";
}

// The value part of a row's documentation: "" for flags and text (the help says it).
std::string accepts(const OptionSpec& s) {
  if (s.type == OptionType::kFlag || s.type == OptionType::kText || s.type == OptionType::kChoice)
    return "";
  return expected(s);
}

std::string env_list(const OptionSpec& s, const char* quote) {
  std::string out;
  for (const auto& n : option_env_names(s)) out += (out.empty() ? "" : ", ") + (quote + n + quote);
  return out;
}

std::string spellings(const OptionSpec& s) {
  std::string out = "--" + s.name;
  if (!s.short_name.empty()) out = "-" + s.short_name + ", " + out;
  return out;
}

std::string cell(std::string text) {  // a Markdown table cell: no bare '|'
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::string format_help(const std::vector<OptionSpec>& specs, bool use_env) {
  std::ostringstream out;
  for (const auto& s : specs) {
    const std::string mv = metavar(s);
    out << "  " << spellings(s) << (mv.empty() ? "" : " " + mv);
    if (s.default_value) out << " (default " << *s.default_value << ")";
    out << "\n      " << s.help;
    if (const std::string a = accepts(s); !a.empty()) out << "; " << a;
    out << "\n";
    if (use_env) out << "      env " << env_list(s, "") << "\n";
  }
  return out.str();
}

std::string format_markdown(const std::vector<OptionSpec>& specs, bool use_env) {
  std::ostringstream out;
  out << "| option | value | default |" << (use_env ? " environment |" : "") << " meaning |\n"
      << "| --- | --- | --- |" << (use_env ? " --- |" : "") << " --- |\n";
  for (const auto& s : specs) {
    std::string value = metavar(s);
    if (const std::string a = accepts(s); !a.empty()) value += ": " + a;
    out << "| `" << spellings(s) << "` | " << cell(value) << " | ";
    if (s.default_value) out << '`' << cell(*s.default_value) << '`';
    out << " |";
    if (use_env) out << " " << env_list(s, "`") << " |";
    out << " " << cell(s.help) << " |\n";
  }
  return out.str();
}

}  // namespace tv
