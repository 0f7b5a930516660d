#include "health/subprocess.h"

#include <fcntl.h>
#include <unistd.h>

#include "common/bounded_read.h"

namespace tv {
namespace {

struct OutFile {
  int fd = -1;
  explicit OutFile(const std::string& path) {
    // O_NOFOLLOW | O_NONBLOCK: a link or FIFO planted at a probe's output path is refused, never
    // written through or waited on (docs/supervision.md, "Files trainvisor creates").
    if (!path.empty())
      fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                  0644);
  }
  ~OutFile() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<pid_t> spawn_to_files(ChildGroup& group, const std::vector<std::string>& argv,
                             const Environment& env, const std::string& stdout_path,
                             const std::string& stderr_path) {
  auto exe = find_executable(argv.at(0), env);
  if (!exe) return exe.error();
  OutFile out(stdout_path), err(stderr_path);
  return group.spawn(SpawnRequest{*exe, argv, env, -1, out.fd, err.fd});
}

std::string read_output_file(const std::string& path) {
  auto text = read_regular_file(path, kLogFileCap);
  return text ? *text : std::string();
}

std::optional<std::string> capture_output(const std::vector<std::string>& argv,
                                          const Environment& env,
                                          std::chrono::milliseconds timeout) {
  char tmpl[] = "/tmp/trainvisor-capture-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return std::nullopt;
  ::close(fd);
  const std::string path = tmpl;
  std::optional<std::string> result;
  ChildGroup group;
  if (spawn_to_files(group, argv, env, path, "")) {
    auto ends = group.wait_all(ChildGroup::Clock::now() + timeout);
    if (!ends[0].timed_out && ends[0].code == 0) result = read_output_file(path);
  }
  ::unlink(path.c_str());
  return result;
}

}  // namespace tv
