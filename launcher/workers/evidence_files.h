// The files a failure leaves as evidence (docs/supervision.md, "Evidence on hang"), and what puts
// them there: the worker hook that Python workers load (launcher/workers/worker_hook.py,
// written once per run into <work dir>/.trainvisor/python, directories of trainvisor's own), the
// pid file `trainvisor stacks --log-dir D` finds the job by, the variables that tell each worker
// where its stacks and NCCL flight-recorder dumps go, the list of the files each generation left
// (error files, stacks, dumps), and the dumps' summary, read in a child of the workers' own
// Python. Every file it reads goes through the FileSystem; --hang-stacks off: none of it.
#pragma once

#include <string>
#include <vector>

#include "common/environment.h"
#include "common/file_system.h"
#include "launcher/workers/worker_env.h"

namespace tv {

// The most of a worker's stderr.log that is read for its exception: its tail, whatever the size.
inline constexpr std::size_t kStderrTail = 64 * 1024;

// The exception line of the last traceback in the tail of the log at `path` (a rank's
// stderr.log); "" when there is none or the file cannot be read (a FIFO or a device is not read).
std::string log_exception(const FileSystem& fs, const std::string& path);

struct EvidenceSetup {
  bool stacks = true;      // --hang-stacks
  bool keep_logs = false;  // --log-dir: the pid file, and the files listed by path
  std::string work_dir;
  int first_attempt = 0;  // attempt_<first_attempt + g>/ (rank_dirs.h)
  WorkerLayout layout;
  std::string executable;  // the workers': the dumps' reader runs it with -I
  std::vector<std::string> argv;
  Environment base_env;
};

class EvidenceFiles {
 public:
  // `fs` must outlive it.
  EvidenceFiles(EvidenceSetup setup, const FileSystem& fs);
  // Once per run, before any worker: the pid file (with --log-dir) and, for Python workers
  // (runs_python, standby.h), the hook; a hook that cannot be written is a warning, not an error.
  void prepare();
  void remove_pid_file() const;
  // Whether Python workers load the hook (their stacks can be asked for).
  bool hooked() const { return !hook_dir_.empty(); }
  // The stacks file, the flight-recorder prefix, the hook's directory and signal of one attempt.
  void add_env(WorkerAttempt& attempt, const std::string& rank_dir) const;
  // With --log-dir: the files of evidence this node's ranks left in attempt_<g>/, by path: error
  // files, stacks, a stderr.log whose tail holds an exception (log_exception), NCCL dumps.
  std::vector<std::string> paths(int generation) const;
  // "evidence:\n  PATH\n..." for a failure report; "" with none.
  std::string listing(int generation) const;
  // This node's ranks' flight-recorder dumps of `generation` that torch wrote (not empty); none
  // for workers that are not Python.
  std::vector<std::string> nccl_dumps(int generation) const;
  // Which collective each rank last entered, from those dumps (a child Python, 20 s at most: it
  // blocks, so only after the loop); "" when there is none.
  std::string nccl_summary(int generation) const;

 private:
  std::string attempt_dir(int generation, int rank) const;

  EvidenceSetup setup_;
  const FileSystem& fs_;
  std::string hook_dir_;  // empty: no worker hook
};

}  // namespace tv
