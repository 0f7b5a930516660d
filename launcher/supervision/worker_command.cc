#include "launcher/supervision/worker_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <sstream>

#include "common/exit_codes.h"

namespace tv {
namespace {

std::string python_exec(const Environment& env) {
  auto p = env.get("PYTHON_EXEC");
  return p && !p->empty() ? *p : "python3";
}

Result<std::string> check_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Error{exit_code::kNotFound, "command not found: " + path + " (no such file)"};
  if (S_ISDIR(st.st_mode))
    return Error{exit_code::kNotExecutable, "command " + path + " is a directory, expected an executable file"};
  if (::access(path.c_str(), X_OK) != 0)
    return Error{exit_code::kNotExecutable,
                 "command " + path + " is not executable (no execute permission)"};
  return path;
}

}  // namespace

Result<std::vector<std::string>> build_worker_argv(const Options& opts, const Environment& env) {
  const auto& cmd = opts.positional;
  if (cmd.empty())
    return Error{exit_code::kUsage, "no command given: expected `trainvisor run [OPTIONS] -- CMD [ARGS...]`"};
  std::vector<std::string> argv;
  if (opts.flag("no-python")) {
    if (opts.flag("module"))
      return Error{exit_code::kUsage, "--no-python and -m/--module cannot be used together"};
    return cmd;
  }
  if (opts.flag("module")) {
    argv = {python_exec(env), "-u", "-m"};
  } else if (cmd.front().ends_with(".py")) {
    argv = {python_exec(env), "-u"};
  }
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  return argv;
}

Result<std::string> resolve_executable(const std::string& argv0, const Environment& env) {
  if (argv0.empty()) return Error{exit_code::kNotFound, "command not found: empty command"};
  if (argv0.find('/') != std::string::npos) return check_file(argv0);
  auto path = env.get("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  std::istringstream dirs(path);
  std::string dir;
  std::optional<Error> denied;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + argv0;
    if (::access(candidate.c_str(), F_OK) != 0) continue;
    auto r = check_file(candidate);
    if (r) return r;
    if (!denied) denied = r.error();
  }
  if (denied) return *denied;
  return Error{exit_code::kNotFound, "command not found: " + argv0 + " (searched PATH=" + path + ")"};
}

std::vector<std::string> expand_resume_arg(const std::string& tmpl, const std::string& path) {
  auto pos = tmpl.find("{}");
  if (pos == std::string::npos) return {tmpl, path};
  std::string out = tmpl;
  while (pos != std::string::npos) {
    out.replace(pos, 2, path);
    pos = out.find("{}", pos + path.size());
  }
  return {out};
}

}  // namespace tv
