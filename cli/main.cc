// trainvisor: the first process of a GPU training container. main() only dispatches.
#include <spdlog/spdlog.h>

#include <boost/system/system_error.hpp>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <system_error>
#include <vector>

#include "cli/commands.h"
#include "common/did_you_mean.h"
#include "common/exit_codes.h"
#include "common/init.h"
#include "common/log.h"
#include "common/options.h"
#include "common/output_sink.h"

namespace {

struct Command {
  const char* name;
  int (*fn)(const tv::Args&, const tv::Environment&);
  const char* summary;
};

constexpr Command kCommands[] = {
    {"run", tv::run_command,
     "start, supervise and restart one worker per GPU: run [OPTIONS] -- CMD"},
    {"topology", tv::topology_command, "print the topology run would use: topology [--json]"},
    {"preflight", tv::preflight_command, "GPU, EFA and NCCL health checks: preflight [--json]"},
    {"checkpoint", tv::checkpoint_command, "checkpoint latest --dir D [--format F]"},
    {"render", tv::render_command,
     "job spec for a platform: render --config F --target kubeflow|sagemaker|batch|slurm"},
    {"version", tv::version_command, "versions of trainvisor and the libraries it finds"},
    {"stacks", tv::stacks_command,
     "every rank's Python stacks of a running job: stacks [--log-dir D | --pid P]"},
    {"report", tv::report_command,
     "where a job's GPU-hours went, from its ledger: report --ledger FILE|DIR [--html OUT]"},
    {"__probe-rank", tv::probe_rank_command, nullptr},
    {"__query", tv::query_command, nullptr},
    {"__options-doc", tv::options_doc_command, nullptr},
};

int usage(FILE* out) {
  std::fprintf(out, "usage: trainvisor COMMAND [ARGS...]\n\ncommands:\n");
  for (const auto& c : kCommands)
    if (c.summary) std::fprintf(out, "  %-11s %s\n", c.name, c.summary);
  return out == stdout ? tv::exit_code::kOk : tv::exit_code_of(tv::ErrorKind::kUsage);
}

int dispatch(int argc, char** argv) {
  // The default logger exists before Init's signal thread does: that thread logs (a signal that
  // ends the run), and replacing the default logger while it logs is a use-after-free (found by
  // ASan with a SIGTERM at once). init_logging starts no thread; later calls only change the
  // format.
  tv::init_logging(tv::LogFormat::kText);
  tv::start_output_sinks();  // their writer threads exist before any worker (common/output_sink.h)
  // Then, before any thread exists: the signal mask, the subreaper and the one waitpid(-1), for
  // the life of the process (common/init.h).
  tv::Init init;
  if (argc < 2) return usage(stderr);
  const std::string word = argv[1];
  if (word == "--help" || word == "-h" || word == "help") return usage(stdout);
  if (word == "--version") return tv::version_command({}, tv::Environment::from_process());
  tv::Args args(argv + 2, argv + argc);
  // SageMaker starts an image as `docker run IMAGE train`: with trainvisor as ENTRYPOINT that is
  // `trainvisor train ...`, run under supervision like `trainvisor run train ...`.
  if (word == "train") {
    args.insert(args.begin(), word);
    const int code = tv::run_command(args, tv::Environment::from_process());
    tv::flush_logs();
    return code;
  }
  for (const auto& c : kCommands)
    if (word == c.name) {
      const int code = c.fn(args, tv::Environment::from_process());
      tv::flush_logs();
      return code;
    }
  std::vector<std::string> names;
  for (const auto& c : kCommands)
    if (c.summary) names.emplace_back(c.name);
  spdlog::error("unknown command '{}'{}", word, tv::did_you_mean(word, names));
  tv::flush_logs();  // before the usage text, which is not a log line
  return usage(stderr);
}

// The signals Init owns are blocked from the first instruction of trainvisor's own code: the
// executable's .preinit_array runs right after the dynamic loader, before any library's
// constructor and long before main() creates Init. A SIGTERM that arrives meanwhile stays pending
// and Init takes it (as PID 1 an unblocked SIGTERM with the default action is dropped by the
// kernel, and the job would run on). What remains is exec and the loader itself
// (docs/supervision.md, "PID 1").
void block_owned_signals_early(int, char**, char**) {
  const sigset_t set = tv::owned_signal_set();  // no allocation, no static state (common/init.h)
  sigprocmask(SIG_BLOCK, &set, nullptr);
}

[[gnu::section(".preinit_array"),
  gnu::used]] void (*const tv_preinit)(int, char**, char**) = block_owned_signals_early;

// An error line in the logger's text form (common/log.cc: "[trainvisor HH:MM:SS.mmm E] ..."),
// written by hand: the two lines below are written when the logger's writer thread may not exist.
void last_resort_error(const std::string& message) {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  tm local{};
  localtime_r(&now.tv_sec, &local);
  char clock[16] = "";
  std::strftime(clock, sizeof clock, "%H:%M:%S", &local);
  std::fprintf(stderr, "[trainvisor %s.%03ld E] %s\n", clock, now.tv_nsec / 1000000,
               message.c_str());
}

// One line and 71 when trainvisor's own descriptors run out (run checks RLIMIT_NOFILE first:
// check_open_files; this is for any other command, or a limit lowered from outside).
int out_of_descriptors(const char* what) {
  last_resort_error(std::string("out of file descriptors (") + what +
                    "): RLIMIT_NOFILE (ulimit -n) is too low for trainvisor's own descriptors");
  return tv::exit_code_of(tv::ErrorKind::kOsError);
}

}  // namespace

// std::thread throws std::system_error(EAGAIN) when the kernel will not start one more thread: a
// pids limit (the container's pids.max) lower than what trainvisor itself needs. One line that
// says so and exit 71 (EX_OSERR), not std::terminate; every other exception is left as it was.
int main(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const boost::system::system_error& e) {  // Boost.Asio's epoll or eventfd
    const int err = e.code().value();
    if (err != EMFILE && err != ENFILE) throw;
    return out_of_descriptors(e.what());
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::too_many_files_open ||
        e.code() == std::errc::too_many_files_open_in_system)
      return out_of_descriptors(e.what());
    if (e.code() != std::errc::resource_unavailable_try_again) throw;
    last_resort_error(std::string("cannot start a thread (") + e.what() +
                      "): the pids limit of this container or cgroup (pids.max) is too low for "
                      "trainvisor's own threads");
    return tv::exit_code_of(tv::ErrorKind::kOsError);
  }
}
