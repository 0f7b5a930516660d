#include "launcher/workers/evidence_files.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "common/children.h"
#include "common/exit_codes.h"
#include "common/init.h"
#include "common/own_dir.h"
#include "common/unique_fd.h"
#include "common/whole_file.h"
#include "launcher/workers/nccl_trace_summary_py.h"
#include "launcher/workers/rank_dirs.h"
#include "launcher/workers/standby.h"
#include "launcher/workers/traceback_watch.h"
#include "launcher/workers/worker_hook_py.h"

namespace tv {
namespace {

constexpr std::size_t kStacksCap = 16u << 20;  // a stacks file read for its last dump
constexpr const char* kHookDir = ".trainvisor";
constexpr auto kNcclSummaryDeadline = std::chrono::seconds(20);
constexpr std::size_t kNcclSummaryCap = 16u << 10;  // the summary's output, one line a rank

// A file worth listing: not empty, for a stacks file more than the hook's header, for a log an
// exception at its end.
bool has_evidence(const FileSystem& fs, const std::string& path) {
  if (fs.regular_size(path).value_or(0) == 0) return false;
  if (path.ends_with("/stderr.log")) return !log_exception(fs, path).empty();
  if (!path.ends_with("/stacks.txt")) return true;
  auto text = fs.read(path, kStacksCap);
  return text && text->find("(most recent call first):") != std::string::npos;
}

// <work dir>/.trainvisor/python/sitecustomize.py, both directories trainvisor's own.
Result<std::string> write_worker_hook(const std::string& work_dir) {
  const UniqueFd work(::open(work_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!work.valid())
    return Error{ErrorKind::kConfig, work_dir + ": cannot open (" + std::strerror(errno) + ")"};
  const std::string top = work_dir + "/" + kHookDir;
  auto own = open_own_directory(work.get(), kHookDir, top);
  if (!own) return own.error();
  auto py = open_own_directory(own->get(), "python", top + "/python");
  if (!py) return py.error();
  const std::string dir = top + "/python";
  auto written = write_whole_file(dir + "/sitecustomize.py", kWorkerHook);
  if (!written) return written.error();
  return dir;
}

// What the dumps' reader child said, with a line when it failed or overran; nullopt when it could
// not be started.
std::optional<std::string> read_summary(const std::string& python, const Environment& env,
                                        const std::vector<std::string>& dumps) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const UniqueFd read_end(fds[0]), write_end(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  std::vector<std::string> argv = {python, "-I", "-c", kNcclTraceSummary};
  argv.insert(argv.end(), dumps.begin(), dumps.end());
  ChildGroup child;
  if (!child.spawn(SpawnRequest{python, argv, env, -1, write_end.get(), -1})) return std::nullopt;
  const auto end = child.wait_all(ChildGroup::Clock::now() + kNcclSummaryDeadline);
  std::string out(kNcclSummaryCap, '\0');
  const ssize_t n = ::read(read_end.get(), out.data(), out.size());
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (end.empty() || end[0].code != 0)
    out += "  (the dumps could not be read: " +
           std::string(end.empty() || end[0].timed_out ? "timed out"
                                                       : "exit " + std::to_string(end[0].code)) +
           ")\n";
  return out;
}

}  // namespace

std::string log_exception(const FileSystem& fs, const std::string& path) {
  const auto size = fs.regular_size(path);
  if (!size) return "";
  const auto tail = fs.read_tail(path, kStderrTail);
  return tail ? last_exception(*tail, *size > tail->size()) : "";
}

EvidenceFiles::EvidenceFiles(EvidenceSetup setup, const FileSystem& fs)
    : setup_(std::move(setup)), fs_(fs) {}

std::string EvidenceFiles::attempt_dir(int generation, int rank) const {
  return rank_dir_path(setup_.work_dir, setup_.first_attempt + generation, rank);
}

void EvidenceFiles::prepare() {
  if (!setup_.stacks) return;
  if (setup_.keep_logs) {  // --log-dir: where `trainvisor stacks --log-dir D` looks
    auto w =
        write_whole_file(setup_.work_dir + "/trainvisor.pid", std::to_string(::getpid()) + "\n");
    if (!w) spdlog::warn("pid file {}", w.error().message);
  }
  if (!runs_python(setup_.argv)) return;  // the hook is for Python workers only
  auto dir = write_worker_hook(std::filesystem::absolute(setup_.work_dir).string());
  if (!dir)
    return spdlog::warn("no Python stacks on hang: the worker hook is not written: {}",
                        dir.error().message);
  hook_dir_ = *dir;
}

void EvidenceFiles::remove_pid_file() const {
  if (setup_.stacks && setup_.keep_logs) ::unlink((setup_.work_dir + "/trainvisor.pid").c_str());
}

void EvidenceFiles::add_env(WorkerAttempt& attempt, const std::string& rank_dir) const {
  if (!setup_.stacks) return;
  const std::string abs = std::filesystem::absolute(rank_dir).string();
  attempt.nccl_trace_prefix = abs + "/nccl_trace_rank_";
  if (hook_dir_.empty()) return;
  attempt.stacks_file = abs + "/stacks.txt";
  attempt.python_hook_dir = hook_dir_;
  attempt.stacks_signal = stacks_signal();
}

// The failure report's list, and the job's ledger's (`trainvisor report`).
std::vector<std::string> EvidenceFiles::paths(int generation) const {
  std::vector<std::string> paths;
  if (!setup_.keep_logs) return paths;
  for (int l = 0; l < setup_.layout.nproc_per_node; ++l) {
    const int rank = global_rank(setup_.layout, l);
    const std::string dir = attempt_dir(generation, rank);
    for (const std::string& name :
         {std::string("error.json"), std::string("stacks.txt"), std::string("stderr.log"),
          "nccl_trace_rank_" + std::to_string(rank)})
      if (has_evidence(fs_, dir + "/" + name)) paths.push_back(dir + "/" + name);
  }
  return paths;
}

std::string EvidenceFiles::listing(int generation) const {
  std::string files;
  for (const auto& path : paths(generation)) files += "  " + path + "\n";
  return files.empty() ? "" : "evidence:\n" + files;
}

std::vector<std::string> EvidenceFiles::nccl_dumps(int generation) const {
  std::vector<std::string> dumps;
  if (!setup_.stacks || !runs_python(setup_.argv)) return dumps;
  for (int l = 0; l < setup_.layout.nproc_per_node; ++l) {
    const int rank = global_rank(setup_.layout, l);
    const std::string path =
        attempt_dir(generation, rank) + "/nccl_trace_rank_" + std::to_string(rank);
    if (fs_.regular_size(path).value_or(0) > 0) dumps.push_back(path);
  }
  return dumps;
}

std::string EvidenceFiles::nccl_summary(int generation) const {
  const auto dumps = nccl_dumps(generation);
  if (dumps.empty()) return "";
  const auto out = read_summary(setup_.executable, setup_.base_env, dumps);
  if (!out) return "";
  return "nccl flight recorder (attempt " + std::to_string(generation) + "):\n" + *out;
}

}  // namespace tv
