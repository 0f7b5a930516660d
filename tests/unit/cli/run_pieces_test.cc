// Pure pieces of `run`: its option table turned into the worker command (torchrun's forms), the
// executable lookup. The supervision pieces are tested in tests/unit/job/, tests/unit/workers/ and
// tests/unit/node/.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/run_options.h"
#include "common/options.h"
#include "common/process.h"
#include "launcher/workers/worker_command.h"

namespace tv {
namespace {

Options parse_run(std::vector<std::string> args) {
  auto o = parse_options(run_option_specs(), args, Environment(), ParseMode{true, false});
  EXPECT_TRUE(o.ok());
  return *o;
}

// Each enumerated option is read through its one table: the row's default is a word of it, every
// word reads as its value, and the environment's spelling is read as the flag's.
TEST(RunChoices, EveryWordReadsAsItsValueAndTheDefaultIsTheRows) {
  const Options none = parse_run({"train.py"});
  EXPECT_EQ(*choice_of(none, "retry-policy", kRetryPolicyWords), RetryMode::kSmart);
  EXPECT_EQ(*choice_of(none, "hang-stacks", kHangStacksWords), true);
  EXPECT_EQ(*choice_of(none, "node-fingerprint", kNodeFingerprintWords), true);
  EXPECT_EQ(*choice_of(none, "gpu-health", kGpuHealthWords), GpuHealthMode::kAuto);
  EXPECT_EQ(*choice_of(none, "log-format", kLogFormatWords), LogFormat::kText);
  EXPECT_EQ(*choice_of(none, "warm-standby", kWarmStandbyWords), WarmMode::kAuto);
  EXPECT_EQ(*choice_of(none, "resume", kResumeWords), Pick::kLatest);
  EXPECT_EQ(*choice_of(none, "require-transport", kTransportWords), TransportRule::kAuto);
  EXPECT_EQ(*choice_of(parse_run({"--require-transport", "net", "t.py"}), "require-transport",
                       kTransportWords),
            TransportRule::kNet);
  EXPECT_EQ(*choice_of(parse_run({"--resume", "none", "t.py"}), "resume", kResumeWords),
            std::nullopt);
  EXPECT_EQ(*choice_of(parse_run({"--retry-policy", "always", "t.py"}), "retry-policy",
                       kRetryPolicyWords),
            RetryMode::kAlways);
  EXPECT_EQ(*choice_of(parse_run({"--gpu-health=off", "t.py"}), "gpu-health", kGpuHealthWords),
            GpuHealthMode::kOff);
  auto env = parse_options(
      run_option_specs(), {"t.py"},
      Environment{{"TRAINVISOR_LOG_FORMAT", "json"}, {"TRAINVISOR_NODE_FINGERPRINT", "off"}},
      ParseMode{true, true});
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(*choice_of(*env, "log-format", kLogFormatWords), LogFormat::kJson);
  EXPECT_EQ(*choice_of(*env, "node-fingerprint", kNodeFingerprintWords), false);
  // A word the row does not have never reaches the table: refused when parsed, naming it.
  auto bad = parse_options(run_option_specs(), {"--warm-standby", "yes", "t.py"}, Environment(),
                           ParseMode{true, false});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().exit_code(), 78);
  EXPECT_NE(bad.error().message.find("--warm-standby"), std::string::npos) << bad.error().message;
  // A table and a row that disagree (a programming error) are named, not taken for a default.
  constexpr Choice<int> kStale[] = {{"smart", 1}};
  auto stale = choice_of(parse_run({"--retry-policy", "always", "t.py"}), "retry-policy", kStale);
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.error().message.find("--retry-policy=\"always\""), std::string::npos);
}

TEST(WorkerCommand, TorchrunForms) {
  const std::string env = "/usr/bin/python3";
  auto py = build_worker_argv(parse_run({"--nproc_per_node", "2", "train.py", "--lr", "1"}), env);
  EXPECT_EQ(*py, (std::vector<std::string>{"/usr/bin/python3", "-u", "train.py", "--lr", "1"}));
  auto mod = build_worker_argv(parse_run({"-m", "pkg.train", "--x"}), env);
  EXPECT_EQ(*mod, (std::vector<std::string>{"/usr/bin/python3", "-u", "-m", "pkg.train", "--x"}));
  auto raw = build_worker_argv(parse_run({"--no-python", "train.py"}), env);
  EXPECT_EQ(*raw, (std::vector<std::string>{"train.py"}));
  auto plain = build_worker_argv(parse_run({"--", "/bin/true", "--nnodes", "3"}), env);
  EXPECT_EQ(*plain, (std::vector<std::string>{"/bin/true", "--nnodes", "3"}));
  // `--` only ends the options (torchrun's argparse too): a script after it still runs under
  // python, its --nnodes is the script's (README.md, docs/torchrun.md).
  auto dashed = build_worker_argv(parse_run({"--", "train.py", "--nnodes", "3"}), env);
  EXPECT_EQ(*dashed,
            (std::vector<std::string>{"/usr/bin/python3", "-u", "train.py", "--nnodes", "3"}));
  EXPECT_EQ(build_worker_argv(parse_run({"--nnodes", "1"}), env).error().exit_code(), 64);
}

TEST(WorkerCommand, ResolveExecutable) {
  Environment env({{"PATH", "/nonexistent:/bin:/usr/bin"}});
  EXPECT_TRUE(find_executable("sh", env).ok());
  EXPECT_EQ(find_executable("no-such-command-xyz", env).error().exit_code(), 127);
  const std::string plain =
      std::filesystem::temp_directory_path() / ("tv-noexec-" + std::to_string(::getpid()));
  std::ofstream(plain) << "data";
  ::chmod(plain.c_str(), 0644);
  auto r = find_executable(plain, env);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().exit_code(), 126);
  std::filesystem::remove(plain);
  EXPECT_EQ(find_executable("/tmp", env).error().exit_code(), 126);
  EXPECT_EQ(find_executable("/no/such/file", env).error().exit_code(), 127);
}

}  // namespace
}  // namespace tv
