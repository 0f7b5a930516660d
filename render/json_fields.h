// Reads the fields of one JSON object of the job description (render/job_config.h): every error is
// exit 78 and names the file, the field's path, the value and what was expected; a field nobody
// read is refused (a typo is not ignored). Internal to render/.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/did_you_mean.h"
#include "common/exit_codes.h"
#include "common/json_text.h"
#include "common/result.h"

namespace tv::render_fields {

using nlohmann::json;

// Reads one JSON object's fields; every error names source, field path, value and expectation.
class Fields {
 public:
  Fields(const json& obj, std::string source, std::string path)
      : obj_(obj), source_(std::move(source)), path_(std::move(path)) {}

  Error error(const std::string& field, const std::string& what) const {
    return Error{ErrorKind::kConfig, source_ + ": " + name(field) + ": " + what};
  }
  std::string name(const std::string& field) const {
    return path_.empty() ? field : path_ + "." + field;
  }
  const json* find(const std::string& field) {
    seen_.insert(field);
    auto it = obj_.find(field);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;
  }
  Fields object(const std::string& field, const json& v) const {
    return Fields(v, source_, name(field));
  }

  Status string(const std::string& field, std::string& out, bool required) {
    const json* v = find(field);
    if (!v) return required ? Status(error(field, "missing (expected a string)")) : ok_status();
    if (!v->is_string() || v->get_ref<const std::string&>().empty())
      return error(field, "expected a non-empty string, got " + json_preview(*v));
    out = v->get<std::string>();
    return ok_status();
  }
  Status string(const std::string& field, std::optional<std::string>& out) {
    std::string s;
    if (auto st = string(field, s, false); !st) return st;
    if (!s.empty()) out = s;
    return ok_status();
  }
  Status integer(const std::string& field, int& out, int min, int max) {
    const json* v = find(field);
    if (!v) return ok_status();
    if (!v->is_number_integer() || v->get<long long>() < min || v->get<long long>() > max)
      return error(field, "expected an integer " + std::to_string(min) + ".." +
                              std::to_string(max) + ", got " + json_preview(*v));
    out = v->get<int>();
    return ok_status();
  }
  Status integer(const std::string& field, std::optional<int>& out, int min, int max) {
    int value = 0;
    if (!find(field)) return ok_status();
    if (auto st = integer(field, value, min, max); !st) return st;
    out = value;
    return ok_status();
  }
  Status boolean(const std::string& field, bool& out) {
    const json* v = find(field);
    if (!v) return ok_status();
    if (!v->is_boolean()) return error(field, "expected true or false, got " + json_preview(*v));
    out = v->get<bool>();
    return ok_status();
  }
  Status boolean(const std::string& field, std::optional<bool>& out) {
    bool value = false;
    if (!find(field)) return ok_status();
    if (auto st = boolean(field, value); !st) return st;
    out = value;
    return ok_status();
  }
  Status strings(const std::string& field, std::vector<std::string>& out, bool required) {
    const json* v = find(field);
    if (!v)
      return required ? Status(error(field, "missing (expected a list of strings)")) : ok_status();
    if (!v->is_array() || (required && v->empty()))
      return error(field, "expected a" + std::string(required ? " non-empty" : "") +
                              " list of strings, got " + json_preview(*v));
    for (const auto& s : *v) {
      if (!s.is_string() || s.get_ref<const std::string&>().empty())
        return error(field, "expected a list of non-empty strings, got " + json_preview(*v));
      out.push_back(s.get<std::string>());
    }
    return ok_status();
  }
  // An object of strings (an empty string is a value): {"ACCEPT_EULA": "Y"}.
  Status string_map(const std::string& field, std::map<std::string, std::string>& out) {
    const json* v = find(field);
    if (!v) return ok_status();
    if (!v->is_object())
      return error(field, "expected an object of strings (NAME: value), got " + json_preview(*v));
    for (const auto& [k, s] : v->items()) {
      if (!s.is_string())
        return error(field + "." + k, "expected a string, got " + json_preview(s));
      out[k] = s.get<std::string>();
    }
    return ok_status();
  }
  // After reading: any field not read is a typo or an unsupported setting.
  Status no_unknown_fields() const {
    for (const auto& [k, v] : obj_.items())
      if (!seen_.count(k))
        return error(k, "unknown field" + did_you_mean(k, {seen_.begin(), seen_.end()}) +
                            " (see docs/render.md for the fields)");
    return ok_status();
  }

 private:
  const json& obj_;
  std::string source_;
  std::string path_;
  std::set<std::string> seen_;
};

inline Status check_all(std::initializer_list<Status> steps) {
  for (const Status& s : steps)
    if (!s) return s;
  return ok_status();
}

inline Result<const json*> sub_object(Fields& f, const std::string& field) {
  const json* v = f.find(field);
  if (v && !v->is_object()) return f.error(field, "expected an object, got " + json_preview(*v));
  return v;
}

}  // namespace tv::render_fields
