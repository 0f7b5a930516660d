// The Supervisor's evidence side (docs/supervision.md, "Evidence on hang"): the worker hook that
// Python workers load (launcher/supervision/worker_hook.py, written once per run into a directory
// of trainvisor's own), the pid file `trainvisor stacks` finds the job by, which workers a stacks
// collection signals (the collection itself: stacks_collection.h), and the evidence files a
// failure report lists.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "common/children.h"
#include "common/exit_codes.h"
#include "common/init.h"
#include "common/own_dir.h"
#include "common/whole_file.h"
#include "launcher/supervision/nccl_trace_summary_py.h"
#include "launcher/supervision/standby.h"
#include "launcher/supervision/supervisor.h"
#include "launcher/supervision/worker_hook_py.h"

namespace tv {
namespace {

constexpr std::size_t kStacksCap = 16u << 20;  // a stacks file read for its last dump
constexpr const char* kHookDir = ".trainvisor";
constexpr auto kNcclSummaryDeadline = std::chrono::seconds(20);
constexpr std::size_t kNcclSummaryCap = 16u << 10;  // the summary's output, one line a rank

// A file worth listing: not empty, and for a stacks file more than the hook's header.
bool has_evidence(const FileSystem& fs, const std::string& path) {
  if (fs.regular_size(path).value_or(0) == 0) return false;
  if (!path.ends_with("/stacks.txt")) return true;
  auto text = fs.read(path, kStacksCap);
  return text && text->find("(most recent call first):") != std::string::npos;
}

// <work dir>/.trainvisor/python/sitecustomize.py, both directories trainvisor's own.
Result<std::string> write_worker_hook(const std::string& work_dir) {
  const UniqueFd work(::open(work_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!work.valid())
    return Error{exit_code::kConfig, work_dir + ": cannot open (" + std::strerror(errno) + ")"};
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

}  // namespace

void Supervisor::prepare_evidence() {
  if (!cfg_.stacks) return;
  if (cfg_.keep_logs) {  // --log-dir: where `trainvisor stacks --log-dir D` looks
    auto w = write_whole_file(cfg_.work_dir + "/trainvisor.pid", std::to_string(::getpid()) + "\n");
    if (!w) spdlog::warn("pid file {}", w.error().message);
  }
  if (!runs_python(cfg_.argv)) return;  // the hook is for Python workers only
  auto dir = write_worker_hook(std::filesystem::absolute(cfg_.work_dir).string());
  if (!dir)
    return spdlog::warn("no Python stacks on hang: the worker hook is not written: {}",
                        dir.error().message);
  python_hook_dir_ = *dir;
}

void Supervisor::remove_pid_file() const {
  if (cfg_.stacks && cfg_.keep_logs) ::unlink((cfg_.work_dir + "/trainvisor.pid").c_str());
}

void Supervisor::add_evidence_env(WorkerAttempt& attempt, const std::string& rank_dir) const {
  if (!cfg_.stacks) return;
  const std::string abs = std::filesystem::absolute(rank_dir).string();
  attempt.nccl_trace_prefix = abs + "/nccl_trace_rank_";
  if (python_hook_dir_.empty()) return;
  attempt.stacks_file = abs + "/stacks.txt";
  attempt.python_hook_dir = python_hook_dir_;
  attempt.stacks_signal = stacks_signal();
}

// The running workers of this generation, for a stacks collection.
std::vector<StacksCollection::Worker> Supervisor::stack_workers() const {
  std::vector<StacksCollection::Worker> out;
  for (const auto& w : workers_)
    if (w && !w->wait_status && w->pid() > 0)
      out.push_back(
          {w->id().rank, w->pid(), attempt_dir(w->id().generation, w->id().rank) + "/stacks.txt"});
  return out;
}

void Supervisor::stacks_then(const std::string& why, std::function<void()> then) {
  if (!cfg_.stacks) return then();
  stacks_.hang_then(why, group_.generation(), stack_workers(), !python_hook_dir_.empty(),
                    std::move(then));
}

void Supervisor::collect_stacks(const std::string& why) {
  stacks_.collect(why, group_.generation(), stack_workers(), !python_hook_dir_.empty(), nullptr,
                  false);
}

// The lines a failure report of `generation` carries: the stacks taken on its hang, and, with
// --log-dir, every file of evidence this node's ranks left in attempt_<g>/ (error files, stacks,
// NCCL flight-recorder dumps), listed by path.
std::string Supervisor::evidence_of(int generation) const {
  std::string out = stacks_.hang_report(generation);
  std::string files;
  for (const auto& path : evidence_paths(generation)) files += "  " + path + "\n";
  if (!files.empty()) out += "evidence:\n" + files;
  return out;
}

// With --log-dir: the files of evidence this node's ranks left in attempt_<g>/ (the failure
// report's list, and the job's ledger's: `trainvisor report`).
std::vector<std::string> Supervisor::evidence_paths(int generation) const {
  std::vector<std::string> paths;
  if (!cfg_.keep_logs) return paths;
  for (int l = 0; l < cfg_.layout.nproc_per_node; ++l) {
    const int rank = global_rank(cfg_.layout, l);
    const std::string dir = attempt_dir(generation, rank);
    for (const std::string& name : {std::string("error.json"), std::string("stacks.txt"),
                                    "nccl_trace_rank_" + std::to_string(rank)})
      if (has_evidence(fs(), dir + "/" + name)) paths.push_back(dir + "/" + name);
  }
  return paths;
}

// This node's ranks' flight-recorder dumps of `generation` that torch wrote (not empty), where a
// child Python can read them: none without the worker's interpreter or with --hang-stacks off.
std::vector<std::string> Supervisor::nccl_dumps(int generation) const {
  std::vector<std::string> dumps;
  if (!cfg_.stacks || !runs_python(cfg_.argv)) return dumps;
  for (int l = 0; l < cfg_.layout.nproc_per_node; ++l) {
    const int rank = global_rank(cfg_.layout, l);
    const std::string path =
        attempt_dir(generation, rank) + "/nccl_trace_rank_" + std::to_string(rank);
    if (fs().regular_size(path).value_or(0) > 0) dumps.push_back(path);
  }
  return dumps;
}

// Which collective each rank last entered, from this node's flight-recorder dumps of `generation`
// (nccl_trace_summary.py in a child Python, after the loop: it blocks); "" when there is none.
std::string Supervisor::nccl_summary(int generation) const {
  const auto dumps = nccl_dumps(generation);
  if (dumps.empty()) return "";
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return "";
  const UniqueFd read_end(fds[0]), write_end(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  std::vector<std::string> argv = {cfg_.executable, "-I", "-c", kNcclTraceSummary};
  argv.insert(argv.end(), dumps.begin(), dumps.end());
  ChildGroup child;
  if (!child.spawn(SpawnRequest{cfg_.executable, argv, cfg_.base_env, -1, write_end.get(), -1}))
    return "";
  const auto end = child.wait_all(ChildGroup::Clock::now() + kNcclSummaryDeadline);
  std::string out(kNcclSummaryCap, '\0');
  const ssize_t n = ::read(read_end.get(), out.data(), out.size());
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (end.empty() || end[0].code != 0)
    out += "  (the dumps could not be read: " +
           std::string(end.empty() || end[0].timed_out ? "timed out"
                                                       : "exit " + std::to_string(end[0].code)) +
           ")\n";
  return "nccl flight recorder (attempt " + std::to_string(generation) + "):\n" + out;
}

}  // namespace tv
