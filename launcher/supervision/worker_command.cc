#include "launcher/supervision/worker_command.h"

#include "common/exit_codes.h"

namespace tv {
namespace {

std::string python_exec(const Environment& env) {
  auto p = env.get("PYTHON_EXEC");
  return p && !p->empty() ? *p : "python3";
}

}  // namespace

Result<std::vector<std::string>> build_worker_argv(const Options& opts, const Environment& env) {
  const auto& cmd = opts.positional;
  if (cmd.empty())
    return Error{exit_code::kUsage,
                 "no command given: expected `trainvisor run [OPTIONS] -- CMD [ARGS...]`"};
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

Status check_python_script(const Options& opts, const FileSystem& fs) {
  const auto& cmd = opts.positional;
  if (cmd.empty() || opts.flag("no-python") || opts.flag("module") || !cmd.front().ends_with(".py"))
    return ok_status();
  if (!fs.exists(cmd.front()))
    return Error{
        exit_code::kNotFound,
        cmd.front() + ": no such file: expected the Python script to run (nothing started)"};
  if (fs.is_directory(cmd.front()))
    return Error{exit_code::kNotFound, cmd.front() +
                                           ": a directory: expected the Python script to "
                                           "run (nothing started)"};
  return ok_status();
}

}  // namespace tv
