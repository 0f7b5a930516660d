#include "launcher/workers/worker_command.h"

#include "common/exit_codes.h"

namespace tv {

Interpreter find_interpreter(const Environment& env, const FileSystem& fs,
                             const std::string& isaac_sim) {
  if (auto p = env.get("PYTHON_EXEC"); p && !p->empty()) return {*p, "PYTHON_EXEC"};
  if (fs.exists(isaac_sim)) return {isaac_sim, "Isaac Sim's"};
  return {"python3", "PATH"};
}

Result<std::vector<std::string>> build_worker_argv(const Options& opts, const std::string& python) {
  const auto& cmd = opts.positional;
  if (cmd.empty())
    return Error{ErrorKind::kUsage,
                 "no command given: expected `trainvisor run [OPTIONS] -- CMD [ARGS...]`"};
  std::vector<std::string> argv;
  if (opts.flag("no-python")) {
    if (opts.flag("module"))
      return Error{ErrorKind::kUsage, "--no-python and -m/--module cannot be used together"};
    return cmd;
  }
  if (opts.flag("module")) {
    argv = {python, "-u", "-m"};
  } else if (cmd.front().ends_with(".py")) {
    argv = {python, "-u"};
  }
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  return argv;
}

Status check_python_script(const Options& opts, const FileSystem& fs) {
  const auto& cmd = opts.positional;
  if (cmd.empty() || opts.flag("no-python") || opts.flag("module") || !cmd.front().ends_with(".py"))
    return ok_status();
  if (!fs.exists(cmd.front()))
    return Error{
        ErrorKind::kNotFound,
        cmd.front() + ": no such file: expected the Python script to run (nothing started)"};
  if (fs.is_directory(cmd.front()))
    return Error{ErrorKind::kNotFound, cmd.front() +
                                           ": a directory: expected the Python script to "
                                           "run (nothing started)"};
  return ok_status();
}

}  // namespace tv
