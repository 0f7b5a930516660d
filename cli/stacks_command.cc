// `trainvisor stacks [--log-dir D | --pid P]`: every rank's Python stacks of a running job, without
// a restart (docs/supervision.md, "Evidence on hang"). It finds the job's trainvisor by the pid
// file `run --log-dir D` keeps in D (D/trainvisor.pid), by --pid, or as PID 1 of the container
// (`kubectl exec POD -- trainvisor stacks`), checks that the process is trainvisor, and sends it
// the stacks signal (common/init.h: Init routes it to the Supervisor, which signals each worker
// and writes D/stacks.txt). With a log dir it waits for the new D/stacks.txt and prints it; without
// one the stacks are in the run's own log. TRAINVISOR_LOG_DIR is read as `run` reads it, so in a
// pod whose spec sets it `kubectl exec POD -- trainvisor stacks` finds the same directory.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "cli/commands.h"
#include "cli/option_tables.h"
#include "common/bounded_read.h"
#include "common/exit_codes.h"
#include "common/init.h"
#include "common/parse_number.h"

namespace tv {

std::vector<OptionSpec> stacks_option_specs() {
  using T = OptionType;
  return {
      {.name = "log-dir", .help = "the run's --log-dir (its trainvisor.pid)", .metavar = "DIR"},
      {.name = "pid",
       .type = T::kInt,
       .help = "trainvisor's pid (default: from --log-dir, else PID 1)",
       .min = 1,
       .max = 1 << 22},
      {.name = "wait-seconds",
       .type = T::kSeconds,
       .help = "seconds to wait for the stacks",
       .default_value = "10",
       .min = 0.1,
       .max = 600},
      {.name = "help", .type = T::kFlag, .help = "this text", .short_name = "h"},
  };
}

namespace {

constexpr const char* kUsage = "usage: trainvisor stacks [--log-dir DIR | --pid PID]\n";

int fail(int code, const std::string& message) {
  spdlog::error("{}", message);
  return code;
}

std::string first_line(const std::string& path) {
  auto text = read_regular_file(path, 1u << 20);
  if (!text) return "";
  return text->substr(0, text->find('\n'));
}

Result<long> job_pid(const Options& o, const std::string& dir) {
  if (o.has("pid")) return o.get_int("pid");
  if (dir.empty()) return 1L;
  const std::string file = dir + "/trainvisor.pid";
  auto text = read_regular_file(file, 64);
  if (!text)
    return Error{ErrorKind::kConfig, file + ": " + text.error().message +
                                         ": expected the pid file of a `trainvisor run "
                                         "--log-dir " +
                                         dir + "` that is running"};
  std::string t = *text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  auto pid = parse_integer<long>(t, 1, 1 << 22);
  if (!pid) return Error{ErrorKind::kConfig, file + ": \"" + t + "\": expected a pid"};
  return *pid;
}

}  // namespace

int stacks_command(const Args& args, const Environment& env) {
  auto o = parse_options(stacks_option_specs(), args, env, ParseMode{.use_env = true});
  if (!o) return fail(o.error().exit_code(), o.error().message);
  if (o->flag("help"))
    return std::printf("%s\n%s", kUsage, format_help(stacks_option_specs()).c_str()), 0;
  if (!o->positional.empty())
    return fail(exit_code_of(ErrorKind::kUsage), "unexpected argument '" + o->positional[0] + "'");
  const std::string dir = o->has("log-dir") ? o->get("log-dir")->value : "";
  auto pid = job_pid(*o, dir);
  if (!pid) return fail(pid.error().exit_code(), pid.error().message);
  const std::string comm_file = "/proc/" + std::to_string(*pid) + "/comm";
  auto comm = read_regular_file(comm_file, 64);
  if (!comm || !comm->starts_with("trainvisor"))
    return fail(
        exit_code_of(ErrorKind::kConfig),
        "pid " + std::to_string(*pid) + " is " +
            (comm ? "not trainvisor (" + comm->substr(0, comm->find('\n')) + ")" : "not running") +
            ": expected the pid of a running `trainvisor run`");
  const std::string out = dir.empty() ? "" : dir + "/stacks.txt";
  const std::string before = out.empty() ? "" : first_line(out);
  if (::kill(static_cast<pid_t>(*pid), stacks_signal()) != 0)
    return fail(exit_code_of(ErrorKind::kConfig),
                "cannot signal pid " + std::to_string(*pid) + ": " + std::strerror(errno));
  if (out.empty()) {
    std::printf("asked trainvisor (pid %ld) for the stacks: they are in its log\n", *pid);
    return exit_code::kOk;
  }
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(static_cast<long>(*o->get_double("wait-seconds") * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::string now = first_line(out);
    if (now.empty() || now == before) continue;
    auto text = read_regular_file(out, 64u << 20);
    if (!text) continue;
    std::fwrite(text->data(), 1, text->size(), stdout);
    return exit_code::kOk;
  }
  return fail(exit_code_of(ErrorKind::kHang),
              out + ": not written within the timeout (is a worker running?)");
}

}  // namespace tv
