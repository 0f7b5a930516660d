#include "health/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <thread>

#include "common/bounded_read.h"

namespace tv {
namespace {

std::vector<char*> c_strings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

std::string path_from(const std::vector<std::string>& envp) {
  for (const auto& e : envp)
    if (e.rfind("PATH=", 0) == 0) return e.substr(5);
  return "/usr/local/bin:/usr/bin:/bin";
}

std::string resolve(const std::string& exe, const std::vector<std::string>& envp) {
  if (exe.find('/') != std::string::npos) return exe;
  std::stringstream dirs(path_from(envp));
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + exe;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return exe;
}

void add_output(posix_spawn_file_actions_t* fa, int fd, const std::string& path) {
  const char* p = path.empty() ? "/dev/null" : path.c_str();
  posix_spawn_file_actions_addopen(fa, fd, p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
}

ExitStatus decode(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) s.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) s.code = 128 + WTERMSIG(status);
  return s;
}

pid_t spawn_with(const SpawnSpec& spec, posix_spawn_file_actions_t* fa, std::string* why) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const std::string exe = resolve(spec.argv.at(0), spec.envp);
  auto argv = c_strings(spec.argv);
  auto envp = c_strings(spec.envp);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), fa, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    if (why) *why = "cannot start " + exe + ": " + std::strerror(rc);
    return -1;
  }
  return pid;
}

}  // namespace

pid_t spawn_process(const SpawnSpec& spec, std::string* why) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  add_output(&fa, 1, spec.stdout_path);
  add_output(&fa, 2, spec.stderr_path);
  const pid_t pid = spawn_with(spec, &fa, why);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

std::vector<ExitStatus> wait_all(const std::vector<pid_t>& pids,
                                 std::chrono::steady_clock::time_point deadline) {
  std::vector<ExitStatus> out(pids.size());
  std::vector<bool> done(pids.size(), false);
  size_t left = pids.size();
  while (left > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      pid_t r = waitpid(pids[i], &status, WNOHANG);
      if (r == pids[i] || (r < 0 && errno == ECHILD)) {
        if (r == pids[i]) out[i] = decode(status);
        done[i] = true;
        --left;
      }
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (size_t i = 0; i < pids.size(); ++i) {
        if (done[i]) continue;
        kill(-pids[i], SIGKILL);
        int status = 0;
        waitpid(pids[i], &status, 0);
        out[i] = decode(status);
        out[i].timed_out = true;
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return out;
}

std::optional<std::string> capture_output(const std::vector<std::string>& argv,
                                          const std::vector<std::string>& envp,
                                          std::chrono::milliseconds timeout) {
  char tmpl[] = "/tmp/trainvisor-capture-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) return std::nullopt;
  close(fd);
  const std::string path = tmpl;
  std::string why;
  const pid_t pid = spawn_process(SpawnSpec{argv, envp, path, ""}, &why);
  std::optional<std::string> result;
  if (pid > 0) {
    auto st = wait_all({pid}, std::chrono::steady_clock::now() + timeout);
    if (!st[0].timed_out && st[0].code == 0) {
      if (auto text = read_regular_file(path, kLogFileCap)) result = *text;
    }
  }
  unlink(path.c_str());
  return result;
}

}  // namespace tv
