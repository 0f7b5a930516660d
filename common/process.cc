#include "common/process.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>
#include <sstream>

#include "common/exit_codes.h"

namespace tv {
namespace {

Result<std::string> check_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Error{ErrorKind::kNotFound, "command not found: " + path + " (no such file)"};
  if (S_ISDIR(st.st_mode))
    return Error{ErrorKind::kCannotExecute,
                 "command " + path + " is a directory, expected an executable file"};
  if (::access(path.c_str(), X_OK) != 0)
    return Error{ErrorKind::kCannotExecute,
                 "command " + path + " is not executable (no execute permission)"};
  return path;
}

}  // namespace

Result<std::string> find_executable(const std::string& name, const Environment& env) {
  if (name.empty()) return Error{ErrorKind::kNotFound, "command not found: empty command"};
  if (name.find('/') != std::string::npos) return check_file(name);
  const auto path = env.get("PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  std::istringstream dirs(path);
  std::optional<Error> denied;
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), F_OK) != 0) continue;
    auto r = check_file(candidate);
    if (r) return r;
    if (!denied) denied = r.error();
  }
  if (denied) return *denied;
  return Error{ErrorKind::kNotFound,
               "command not found: " + name + " (searched PATH=" + path + ")"};
}

int exit_code_from_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status))
    return exit_code_of(ErrorKind::kStoppedBySignal, WTERMSIG(wait_status));
  return 1;
}

int signal_from_status(int wait_status) {
  return WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
}

}  // namespace tv
