// Pure pieces of supervision: line splitting, the worker environment, descendants, root cause
// files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "launcher/job/root_cause.h"
#include "launcher/workers/descendants.h"
#include "launcher/workers/line_splitter.h"
#include "launcher/workers/worker_command.h"
#include "launcher/workers/worker_env.h"
#include "tests/unit/fakes/fake_file_system.h"

namespace tv {
namespace {

std::vector<std::string> split(LineSplitter& s, std::string_view data) {
  std::vector<std::string> out;
  s.feed(data, [&](std::string_view l) { out.emplace_back(l); });
  return out;
}

TEST(LineSplitter, JoinsPiecesAndSplitsLines) {
  LineSplitter s;
  EXPECT_TRUE(split(s, "hel").empty());
  EXPECT_EQ(split(s, "lo\nwor"), std::vector<std::string>{"hello"});
  EXPECT_EQ(split(s, "ld\n\nx\n"), (std::vector<std::string>{"world", "", "x"}));
  std::vector<std::string> rest;
  s.finish([&](std::string_view l) { rest.emplace_back(l); });
  EXPECT_TRUE(rest.empty());
}

TEST(LineSplitter, LastLineWithoutNewlineAndOverlongLines) {
  LineSplitter s(4);
  EXPECT_EQ(split(s, "abcdefghij\n"), (std::vector<std::string>{"abcd", "efgh", "ij"}));
  split(s, "tail");
  std::vector<std::string> rest;
  s.finish([&](std::string_view l) { rest.emplace_back(l); });
  EXPECT_EQ(rest, std::vector<std::string>{"tail"});
}

// Each piece with whether it continues a line cut before it: the console marks those.
std::vector<std::pair<std::string, bool>> pieces(LineSplitter& s, std::string_view data) {
  std::vector<std::pair<std::string, bool>> out;
  s.feed(data, [&](std::string_view l, bool continued) { out.emplace_back(l, continued); });
  return out;
}

TEST(LineSplitter, PiecesOfACutLineSayTheyContinueIt) {
  LineSplitter s(4);
  using P = std::vector<std::pair<std::string, bool>>;
  EXPECT_EQ(pieces(s, "abcdefghij\nxy\n"),
            (P{{"abcd", false}, {"efgh", true}, {"ij", true}, {"xy", false}}));
  // A line of exactly the split size is not cut; the cut is only known once more bytes come.
  EXPECT_EQ(pieces(s, "abcd\n"), (P{{"abcd", false}}));
  EXPECT_TRUE(pieces(s, "abcd").empty());
  EXPECT_EQ(pieces(s, "e"), (P{{"abcd", false}}));
  P rest;
  s.finish([&](std::string_view l, bool continued) { rest.emplace_back(l, continued); });
  EXPECT_EQ(rest, (P{{"e", true}}));
  EXPECT_EQ(pieces(s, "z\n"), (P{{"z", false}})) << "a new stream starts a new line";
}

TEST(WorkerEnv, TorchrunContract) {
  Environment base({{"PATH", "/bin"}, {"OMP_NUM_THREADS", "8"}});
  WorkerLayout l{
      2, 1, 4, "10.0.0.1", "default", "job", 3, {{"NCCL_SOCKET_IFNAME", "eth0"}}, std::nullopt};
  WorkerAttempt a;
  a.local_rank = 2;
  a.generation = 1;
  a.master_port = 29600;
  a.error_file = "/tmp/e.json";
  a.heartbeat_file = "/tmp/hb";
  a.resume_checkpoint = "/ckpt/a.pt";
  Environment e = build_worker_env(base, l, a);
  auto v = [&](const char* k) { return e.get(k).value_or("<unset>"); };
  EXPECT_EQ(v("RANK"), "6");
  EXPECT_EQ(v("LOCAL_RANK"), "2");
  EXPECT_EQ(v("GROUP_RANK"), "1");
  EXPECT_EQ(v("ROLE_RANK"), "6");
  EXPECT_EQ(v("LOCAL_WORLD_SIZE"), "4");
  EXPECT_EQ(v("WORLD_SIZE"), "8");
  EXPECT_EQ(v("GROUP_WORLD_SIZE"), "2");
  EXPECT_EQ(v("ROLE_WORLD_SIZE"), "8");
  EXPECT_EQ(v("MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(v("MASTER_PORT"), "29600");
  EXPECT_EQ(v("TORCHELASTIC_RESTART_COUNT"), "1");
  EXPECT_EQ(v("TORCHELASTIC_MAX_RESTARTS"), "3");
  EXPECT_EQ(v("TORCHELASTIC_RUN_ID"), "job");
  EXPECT_EQ(v("TORCHELASTIC_USE_AGENT_STORE"), "False");
  EXPECT_EQ(v("TORCHELASTIC_ERROR_FILE"), "/tmp/e.json");
  EXPECT_EQ(v("TRAINVISOR_HEARTBEAT_FILE"), "/tmp/hb");
  EXPECT_EQ(v("TRAINVISOR_RESUME_CHECKPOINT"), "/ckpt/a.pt");
  EXPECT_EQ(v("OMP_NUM_THREADS"), "8");  // the user's value wins
  EXPECT_EQ(v("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(v("PATH"), "/bin");
}

TEST(WorkerEnv, EvidenceVariablesAndTheUsersFlightRecorderSettings) {
  Environment base({{"PYTHONPATH", "/user/lib"}, {"TORCH_NCCL_TRACE_BUFFER_SIZE", "7"}});
  WorkerAttempt a;
  a.stacks_file = "/logs/attempt_0/rank_0/stacks.txt";
  a.python_hook_dir = "/logs/.trainvisor/python";
  a.stacks_signal = 42;
  a.nccl_trace_prefix = "/logs/attempt_0/rank_0/nccl_trace_rank_";
  Environment e = build_worker_env(base, WorkerLayout{}, a);
  auto v = [&](const char* k) { return e.get(k).value_or("<unset>"); };
  EXPECT_EQ(v("PYTHONPATH"), "/logs/.trainvisor/python:/user/lib");  // the hook removes its part
  EXPECT_EQ(v("TRAINVISOR_STACKS_FILE"), "/logs/attempt_0/rank_0/stacks.txt");
  EXPECT_EQ(v("TRAINVISOR_STACKS_SIGNAL"), "42");
  EXPECT_EQ(v("TORCH_NCCL_TRACE_BUFFER_SIZE"), "7");  // the user's own, under the old name
  EXPECT_EQ(v("TORCH_FR_BUFFER_SIZE"), "<unset>");    // so not ours beside it
  EXPECT_EQ(v("TORCH_NCCL_DUMP_ON_TIMEOUT"), "1");
  EXPECT_EQ(v("TORCH_FR_DUMP_TEMP_FILE"), "/logs/attempt_0/rank_0/nccl_trace_rank_");
  EXPECT_EQ(v("TORCH_NCCL_DEBUG_INFO_TEMP_FILE"), "<unset>");  // torch 2.11 warns about it
  // Off (--hang-stacks off): nothing of it.
  Environment off = build_worker_env(Environment(), WorkerLayout{}, WorkerAttempt{});
  for (const char* k : {"PYTHONPATH", "TRAINVISOR_STACKS_FILE", "TORCH_NCCL_DUMP_ON_TIMEOUT",
                        "TORCH_FR_BUFFER_SIZE", "TORCH_FR_DUMP_TEMP_FILE"})
    EXPECT_FALSE(off.get(k)) << k;
}

// torchrun of the workers' torch: 1.13 and 2.1 set the old name, 2.2 on the new one, 2.9 on also
// the signals; an unknown torch gets both names.
TEST(WorkerEnv, FollowsTheWorkersTorch) {
  auto with = [](std::optional<std::pair<int, int>> torch) {
    WorkerLayout l;
    l.torch = torch;
    return build_worker_env(Environment(), l, WorkerAttempt{});
  };
  for (auto old : {std::pair{1, 13}, std::pair{2, 1}}) {
    EXPECT_EQ(with(old).get("NCCL_ASYNC_ERROR_HANDLING"), "1");
    EXPECT_FALSE(with(old).get("TORCH_NCCL_ASYNC_ERROR_HANDLING"));
    EXPECT_FALSE(with(old).get("TORCHELASTIC_SIGNALS_TO_HANDLE"));
  }
  for (auto now : {std::pair{2, 2}, std::pair{2, 7}, std::pair{2, 11}, std::pair{3, 0}}) {
    EXPECT_FALSE(with(now).get("NCCL_ASYNC_ERROR_HANDLING"));
    EXPECT_EQ(with(now).get("TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
  }
  EXPECT_FALSE(with(std::pair{2, 8}).get("TORCHELASTIC_SIGNALS_TO_HANDLE"));
  EXPECT_EQ(with(std::pair{2, 11}).get("TORCHELASTIC_SIGNALS_TO_HANDLE"),
            "SIGTERM,SIGINT,SIGHUP,SIGQUIT");
  EXPECT_EQ(with(std::nullopt).get("NCCL_ASYNC_ERROR_HANDLING"), "1");
  EXPECT_EQ(with(std::nullopt).get("TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
  WorkerLayout own;
  own.torch = std::pair{2, 11};
  const Environment base({{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "3"}});
  EXPECT_EQ(build_worker_env(base, own, WorkerAttempt{}).get("TORCH_NCCL_ASYNC_ERROR_HANDLING"),
            "3");  // the user's value wins
}

TEST(WorkerEnv, OmpOnlyWithSeveralWorkersAndNoStaleResume) {
  Environment base({{"TRAINVISOR_RESUME_CHECKPOINT", "/stale"}});
  WorkerLayout one;
  Environment e = build_worker_env(base, one, WorkerAttempt{});
  EXPECT_FALSE(e.get("OMP_NUM_THREADS"));
  EXPECT_FALSE(e.get("TRAINVISOR_RESUME_CHECKPOINT"));
  WorkerLayout two;
  two.nproc_per_node = 2;
  EXPECT_EQ(build_worker_env(Environment(), two, WorkerAttempt{}).get("OMP_NUM_THREADS"), "1");
}

TEST(Descendants, WalksTheTreeAndSurvivesCycles) {
  std::map<pid_t, pid_t> t = {{1, 0}, {10, 1}, {11, 10}, {12, 11}, {20, 1}, {30, 31}, {31, 30}};
  EXPECT_EQ(descendants_of(10, t), (std::vector<pid_t>{11, 12}));
  EXPECT_EQ(descendants_of(1, t), (std::vector<pid_t>{10, 11, 12, 20}));
  EXPECT_TRUE(descendants_of(99, t).empty());
}

TEST(Descendants, ProcessTableHasThisProcessAndItsParent) {
  auto t = read_process_table();
  ASSERT_TRUE(t.count(::getpid()));
  EXPECT_EQ(t[::getpid()].ppid, ::getppid());
  EXPECT_EQ(t[::getpid()].pgid, ::getpgrp());
  EXPECT_EQ(t[::getpid()].sid, ::getsid(0));
  EXPECT_GT(t[::getpid()].start, 0u);
}

// trainvisor is 1 (group 1, session 1); the run began at tick 100.
TEST(Leftovers, OnlyWhatAWorkerStartedIsAWorkersLeftover) {
  const ProcEntry self{0, 1, 1, 50};
  const ProcTable t = {
      {10, {1, 10, 1, 120}},  // a worker's child still in the worker's group (the worker is gone)
      {11, {10, 10, 1, 121}},
      {12, {1, 12, 12, 130}},  // a worker's setsid'd grandchild, orphaned: the subreaper's child
      {20, {1, 20, 1, 110}},   // the GPU watch (an own child) and its child
      {21, {20, 20, 1, 111}},
      {30, {1, 1, 1, 40}},     // a sidecar from before the exec, in trainvisor's group
      {31, {30, 1, 1, 140}},   // its child
      {32, {1, 1, 1, 150}},    // its orphan, still in trainvisor's group
      {33, {1, 33, 33, 90}},   // a daemon that started before the run
      {34, {1, 34, 33, 160}},  // in the old daemon's session
      {41, {1, 41, 20, 171}},  // an orphan in the GPU watch's session
  };
  NotLeftovers keep{{20, 30}, 100};
  EXPECT_EQ(leftovers_of(1, self, t, keep), (std::vector<pid_t>{10, 11, 12}));
  keep.run_start = 0;  // no start time known: the old daemon is taken for a worker's orphan
  EXPECT_EQ(leftovers_of(1, self, t, keep), (std::vector<pid_t>{10, 11, 12, 33, 34}));
}

TEST(RootCause, ParsesTorchErrorFiles) {
  auto f = parse_error_file(
      R"({"message": {"message": "ValueError: boom", "extraInfo": {"py_callstack": "Traceback...\nValueError: boom\n", "timestamp": "1700000000"}}})");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->message, "ValueError: boom");
  EXPECT_EQ(f->traceback, "Traceback...\nValueError: boom\n");
  EXPECT_EQ(f->timestamp, 1700000000);
  auto plain = parse_error_file(R"({"message": "RuntimeError: x"})");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->message, "RuntimeError: x");
  EXPECT_FALSE(parse_error_file("not json"));
  EXPECT_FALSE(parse_error_file("[1,2]"));
}

TEST(RootCause, SummaryPrefersErrorFileThenTail) {
  FailureRecord r;
  r.rank = 3;
  r.node_rank = 1;
  r.local_rank = 1;
  r.exit_code = 137;
  r.signal = 9;
  r.tail = {"step 10", "CUDA out of memory"};
  EXPECT_EQ(summary_line(r), "rank 3 (node 1, local 1): signal 9 (SIGKILL): CUDA out of memory");
  r.error = ErrorFileInfo{"ValueError: boom", "tb", 1};
  EXPECT_EQ(summary_line(r), "rank 3 (node 1, local 1): signal 9 (SIGKILL): ValueError: boom");
  EXPECT_NE(format_failure_table({r}).find("ValueError: boom"), std::string::npos);
}

// The root cause's line: the error file, else the last traceback on stderr, else the last output
// line, whatever came after the traceback on stdout.
TEST(RootCause, SummaryIsTheErrorFileThenTheStderrTracebackThenTheLastLine) {
  FailureRecord r;
  r.tail = {"Traceback (most recent call last):", "RuntimeError: NCCL error", "log line 199"};
  EXPECT_EQ(root_cause_line(r), "log line 199");
  EXPECT_EQ(summary_line(r), "rank 0 (node 0, local 0): exit 1: log line 199");
  r.traceback = {"Traceback (most recent call last):", "  File \"t.py\", line 2, in <module>",
                 "RuntimeError: NCCL error: unhandled system error"};
  EXPECT_EQ(summary_line(r),
            "rank 0 (node 0, local 0): exit 1: RuntimeError: NCCL error: unhandled system error");
  EXPECT_NE(format_failure_table({r}).find("exit 1: RuntimeError: NCCL error: unhandled"),
            std::string::npos);
  // The details are the traceback, not the tail of stdout.
  EXPECT_EQ(detail_text(r), summary_line(r) +
                                "\nTraceback (most recent call last):\n  File \"t.py\", line 2, in "
                                "<module>\nRuntimeError: NCCL error: unhandled system error\n");
  r.error = ErrorFileInfo{"ValueError: from @record", "", 1};
  EXPECT_EQ(root_cause_line(r), "ValueError: from @record");
  r.error = ErrorFileInfo{"", "", 1};  // an error file without a message: the traceback stands
  EXPECT_EQ(root_cause_line(r), "RuntimeError: NCCL error: unhandled system error");
  EXPECT_EQ(root_cause_line(FailureRecord{}), "");
}

TEST(RootCause, ErrorFileTimeIsTheRegularFilesMtime) {
  const RealFileSystem real;
  const auto dir =
      std::filesystem::temp_directory_path() / ("tv_rc_mtime_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(error_file_written(real, (dir / "absent").string()));
  EXPECT_FALSE(error_file_written(real, dir.string()));  // a directory is no error file
  const auto before = std::chrono::system_clock::now() - std::chrono::seconds(5);
  std::ofstream((dir / "error.json").string()) << "{}";
  auto t = error_file_written(real, (dir / "error.json").string());
  ASSERT_TRUE(t);
  EXPECT_GT(*t, before);
  EXPECT_LT(*t, std::chrono::system_clock::now() + std::chrono::seconds(5));
  std::filesystem::remove_all(dir);
}

// Through the FileSystem seam: the mtime a fake file has, a device node refused with its path
// named, an absent file with no reason (the usual case).
TEST(RootCause, ErrorFilesAreReadThroughTheFileSystem) {
  testing::FakeFileSystem fs;
  fs.add_file("/w/rank_0/error.json", R"({"message": "ValueError: boom"})");
  fs.touch("/w/rank_0/error.json", 1'500'000'000'123'456'789);
  fs.add_node("/w/rank_1/error.json");
  const auto t = error_file_written(fs, "/w/rank_0/error.json");
  ASSERT_TRUE(t);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::nanoseconds>(t->time_since_epoch()).count(),
            1'500'000'000'123'456'789);
  EXPECT_FALSE(error_file_written(fs, "/w/rank_1/error.json"));  // not a regular file
  std::string why;
  const auto info = read_error_file(fs, "/w/rank_0/error.json", &why);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->message, "ValueError: boom");
  EXPECT_EQ(why, "");
  EXPECT_FALSE(read_error_file(fs, "/w/rank_1/error.json", &why));
  EXPECT_TRUE(why.starts_with("/w/rank_1/error.json: ")) << why;
  why.clear();
  EXPECT_FALSE(read_error_file(fs, "/w/rank_2/error.json", &why));
  EXPECT_EQ(why, "");
}

TEST(RootCause, FileWrittenOnlyWhenDirExistsAndOnlyOnceWhenAsked) {
  auto dir = std::filesystem::temp_directory_path() / ("tv-rc-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "failure").string();
  EXPECT_TRUE(write_root_cause_file(path, "first", true, 100).value());
  EXPECT_FALSE(write_root_cause_file(path, "second", true, 100).value());
  auto text_of = [&] {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  EXPECT_EQ(text_of(), "first\n");  // a text file: its last line ends with a newline
  EXPECT_TRUE(write_root_cause_file(path, "0123456789", false, 4).value());
  EXPECT_EQ(text_of(), "012\n");  // cut at the limit, the newline included
  EXPECT_TRUE(write_root_cause_file(path, "two\nlines\n", false, 100).value());
  EXPECT_EQ(text_of(), "two\nlines\n");  // one newline, not two
  EXPECT_FALSE(write_root_cause_file((dir / "missing" / "f").string(), "x", false, 100).value());
  std::filesystem::remove_all(dir);
}

TEST(RootCause, AFifoIsRefusedNotWaitedFor) {
  auto dir = std::filesystem::temp_directory_path() / ("tv-rc-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "termination-log").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
  auto r = write_root_cause_file(path, "reason", false, 100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, path + ": not written (not a regular file)");
  std::filesystem::remove_all(dir);
}

TEST(RootCause, WorkerTextIsEscaped) {
  FailureRecord r;
  r.rank = 1;
  r.exit_code = 1;
  r.error = ErrorFileInfo{"boom\n[trainvisor 00:00:00.000 I] forged\x1b[31m",
                          "Trace\r\n  line\x1b[0m\n", 0};
  EXPECT_EQ(summary_line(r),
            "rank 1 (node 0, local 0): exit 1: boom\\n[trainvisor 00:00:00.000 I] forged\\x1b[31m");
  EXPECT_NE(detail_text(r).find("Trace\\r\n  line\\x1b[0m\n"), std::string::npos);
  r.error.reset();
  r.tail = {"plain", "red \x1b[31mtext\r"};
  EXPECT_EQ(summary_line(r), "rank 1 (node 0, local 0): exit 1: red \\x1b[31mtext\\r");
}

TEST(RootCause, OverlongOrNonNumericTimestampIsZero) {
  auto e =
      parse_error_file(R"({"message": {"message": "m", "extraInfo": {"timestamp": "1e999999"}}})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->timestamp, 0);
  e = parse_error_file(R"({"message": {"message": "m", "extraInfo": {"timestamp": "17000"}}})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->timestamp, 17000);
}

TEST(RootCause, FieldsOfAnotherTypeAreIgnoredNotThrown) {
  // Found by fuzz_error_file: a nested object where torch writes a string aborted trainvisor.
  auto e = parse_error_file(
      R"({"message": {"message": {"py_callstack": "Traceback"}, "extraInfo": {"py_callstack": 7}}})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message, "");
  EXPECT_EQ(e->traceback, "");
  e = parse_error_file(R"({"message": {"message": ["x"], "extraInfo": []}})");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message, "");
}

TEST(WorkerCommand, InterpreterIsPythonExecThenIsaacSimThenPython3) {
  testing::FakeFileSystem isaac;
  isaac.add_file(kIsaacSimPython, "#!/bin/bash\n");
  const Environment set({{"PYTHON_EXEC", "/opt/py/bin/python"}});
  EXPECT_EQ(find_interpreter(set, isaac).path, "/opt/py/bin/python");
  EXPECT_EQ(find_interpreter(set, isaac).origin, "PYTHON_EXEC");
  EXPECT_EQ(find_interpreter(Environment({{"PYTHON_EXEC", ""}}), isaac).path, kIsaacSimPython);
  EXPECT_EQ(find_interpreter(Environment(), isaac).origin, "Isaac Sim's");
  EXPECT_EQ(find_interpreter(Environment(), testing::FakeFileSystem()).path, "python3");
  EXPECT_EQ(find_interpreter(Environment(), testing::FakeFileSystem()).origin, "PATH");
  Options script;
  script.positional = {"x.py"};
  EXPECT_EQ(build_worker_argv(script, kIsaacSimPython).value(),
            (std::vector<std::string>{kIsaacSimPython, "-u", "x.py"}));
}

}  // namespace
}  // namespace tv
