// An immutable snapshot of environment variables. Only main() reads `environ`; everything else
// receives an Environment, so tests pass in whatever they like.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tv {

class Environment {
 public:
  Environment() = default;
  explicit Environment(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {}
  Environment(std::initializer_list<std::pair<const std::string, std::string>> vars) : vars_(vars) {}
  static Environment from_process();  // reads environ once

  std::optional<std::string> get(const std::string& name) const;
  // Set and non-empty.
  bool has(const std::string& name) const;
  void set(const std::string& name, std::string value) { vars_[name] = std::move(value); }
  void erase(const std::string& name) { vars_.erase(name); }
  const std::map<std::string, std::string>& vars() const { return vars_; }
  // "NAME=value" strings, for execve.
  std::vector<std::string> to_envp() const;

 private:
  std::map<std::string, std::string> vars_;
};

}  // namespace tv
