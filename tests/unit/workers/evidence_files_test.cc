// EvidenceFiles: the files of evidence listed by path only with --log-dir and only when they hold
// evidence (a stacks file with more than the hook's header, a dump torch wrote), read through the
// FileSystem; the flight-recorder dumps only for Python workers; the pid file and the worker hook
// written (real files) and the variables each worker gets, all off with --hang-stacks off.
#include "launcher/workers/evidence_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/unit/fakes/fake_file_system.h"
#include "tests/unit/fakes/temp_dir.h"

namespace tv {
namespace {

using testing::FakeFileSystem;
using testing::TempDir;

EvidenceSetup setup(std::vector<std::string> argv, bool keep_logs = true) {
  EvidenceSetup s;
  s.keep_logs = keep_logs;
  s.work_dir = "/logs";
  s.layout.node_rank = 1;
  s.layout.nproc_per_node = 2;  // ranks 2 and 3
  s.executable = "/usr/bin/python3";
  s.argv = std::move(argv);
  return s;
}

TEST(EvidenceFiles, OnlyFilesHoldingEvidenceAreListedAndOnlyWithALogDir) {
  FakeFileSystem fs;
  fs.add_file("/logs/attempt_0/rank_2/error.json", R"({"message": "boom"})");
  fs.add_file("/logs/attempt_0/rank_2/stacks.txt", "trainvisor stacks hook, pid 7\n");
  fs.add_file("/logs/attempt_0/rank_3/stacks.txt",
              "Thread 0x1 (most recent call first):\n  File \"t.py\", line 6\n");
  fs.add_file("/logs/attempt_0/rank_3/nccl_trace_rank_3", "dump");
  fs.add_file("/logs/attempt_0/rank_2/nccl_trace_rank_2", "");  // torch wrote nothing
  const EvidenceFiles e(setup({"/usr/bin/python3", "-u", "train.py"}), fs);
  EXPECT_EQ(e.paths(0), (std::vector<std::string>{"/logs/attempt_0/rank_2/error.json",
                                                  "/logs/attempt_0/rank_3/stacks.txt",
                                                  "/logs/attempt_0/rank_3/nccl_trace_rank_3"}));
  EXPECT_EQ(e.listing(0),
            "evidence:\n  /logs/attempt_0/rank_2/error.json\n  /logs/attempt_0/rank_3/stacks.txt\n"
            "  /logs/attempt_0/rank_3/nccl_trace_rank_3\n");
  EXPECT_EQ(e.listing(1), "");
  EXPECT_EQ(e.nccl_dumps(0), std::vector<std::string>{"/logs/attempt_0/rank_3/nccl_trace_rank_3"});
  const EvidenceFiles no_log_dir(setup({"/usr/bin/python3", "-u", "train.py"}, false), fs);
  EXPECT_TRUE(no_log_dir.paths(0).empty());
  const EvidenceFiles shell(setup({"/bin/sh", "train.sh"}), fs);
  EXPECT_TRUE(shell.nccl_dumps(0).empty());  // no Python to read them with
}

// A rank's stderr.log is evidence when its tail ends in a traceback (the worker raised): read as
// a tail, so a huge log costs kStderrTail bytes and its exception line is still found.
TEST(EvidenceFiles, AStderrLogWithAnExceptionIsListed) {
  FakeFileSystem fs;
  fs.add_file("/logs/attempt_0/rank_2/stderr.log", "a warning\nno traceback here\n");
  fs.add_file("/logs/attempt_0/rank_3/stderr.log",
              std::string(10 * kStderrTail, 'x') +
                  "\nTraceback (most recent call last):\n  File \"t.py\", line 9, in <module>\n"
                  "ValueError: rank 3 fails on the first attempt\n");
  const EvidenceFiles e(setup({"/usr/bin/python3", "-u", "train.py"}), fs);
  EXPECT_EQ(e.paths(0), std::vector<std::string>{"/logs/attempt_0/rank_3/stderr.log"});
  EXPECT_EQ(log_exception(fs, "/logs/attempt_0/rank_3/stderr.log"),
            "ValueError: rank 3 fails on the first attempt");
  EXPECT_EQ(log_exception(fs, "/logs/attempt_0/rank_2/stderr.log"), "");
  EXPECT_EQ(log_exception(fs, "/logs/none/stderr.log"), "");
  // The traceback before the tail: not found, never read whole.
  fs.append("/logs/attempt_0/rank_3/stderr.log", std::string(kStderrTail, 'y') + "\n");
  EXPECT_EQ(log_exception(fs, "/logs/attempt_0/rank_3/stderr.log"), "");
}

class EvidenceFilesOnDisk : public ::testing::Test {
 protected:
  EvidenceSetup on_disk(std::vector<std::string> argv, bool stacks = true) {
    EvidenceSetup s = setup(std::move(argv));
    s.work_dir = dir_;
    s.stacks = stacks;
    return s;
  }
  TempDir tmp_{"tv-evidence"};
  std::string dir_ = tmp_.path();
  RealFileSystem fs_;
};

TEST_F(EvidenceFilesOnDisk, PythonWorkersGetTheHookAndThePidFileLastsUntilRemoved) {
  EvidenceFiles e(on_disk({"python3", "train.py"}), fs_);
  e.prepare();
  EXPECT_TRUE(e.hooked());
  const std::string hook = dir_ + "/.trainvisor/python/sitecustomize.py";
  EXPECT_TRUE(std::filesystem::is_regular_file(hook));
  std::ifstream pid(dir_ + "/trainvisor.pid");
  std::stringstream text;
  text << pid.rdbuf();
  EXPECT_EQ(text.str(), std::to_string(::getpid()) + "\n");
  WorkerAttempt a;
  e.add_env(a, dir_ + "/attempt_0/rank_2");
  EXPECT_EQ(a.stacks_file, dir_ + "/attempt_0/rank_2/stacks.txt");
  EXPECT_EQ(a.python_hook_dir, dir_ + "/.trainvisor/python");
  EXPECT_EQ(a.nccl_trace_prefix, dir_ + "/attempt_0/rank_2/nccl_trace_rank_");
  EXPECT_NE(a.stacks_signal, 0);
  e.remove_pid_file();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/trainvisor.pid"));
}

TEST_F(EvidenceFilesOnDisk, AShellCommandARefusedDirectoryAndStacksOffGetNoHook) {
  EvidenceFiles shell(on_disk({"/bin/sh", "train.sh"}), fs_);
  shell.prepare();
  EXPECT_FALSE(shell.hooked());
  WorkerAttempt a;
  shell.add_env(a, dir_ + "/attempt_0/rank_2");
  EXPECT_EQ(a.stacks_file, "");
  EXPECT_EQ(a.nccl_trace_prefix, dir_ + "/attempt_0/rank_2/nccl_trace_rank_");

  std::filesystem::create_directory_symlink("/tmp", dir_ + "/.trainvisor");  // planted link
  EvidenceFiles refused(on_disk({"python3", "train.py"}), fs_);
  refused.prepare();
  EXPECT_FALSE(refused.hooked());  // a warning; the run goes on without Python stacks

  std::filesystem::remove(dir_ + "/.trainvisor");
  std::filesystem::remove(dir_ + "/trainvisor.pid");
  EvidenceFiles off(on_disk({"python3", "train.py"}, /*stacks=*/false), fs_);
  off.prepare();
  EXPECT_FALSE(off.hooked());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/trainvisor.pid"));
  WorkerAttempt b;
  off.add_env(b, dir_ + "/attempt_0/rank_2");
  EXPECT_EQ(b.nccl_trace_prefix, "");
}

}  // namespace
}  // namespace tv
