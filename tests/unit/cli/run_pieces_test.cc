// Pure pieces of `run`: its option table turned into the worker command (torchrun's forms), the
// executable lookup. The supervision pieces are tested in tests/unit/supervision/.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/run_options.h"
#include "common/options.h"
#include "common/process.h"
#include "launcher/supervision/worker_command.h"

namespace tv {
namespace {

Options parse_run(std::vector<std::string> args) {
  auto o = parse_options(run_option_specs(), args, Environment(), ParseMode{true, false});
  EXPECT_TRUE(o.ok());
  return *o;
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
  EXPECT_EQ(build_worker_argv(parse_run({"--nnodes", "1"}), env).error().exit_code, 64);
}

TEST(WorkerCommand, ResolveExecutable) {
  Environment env({{"PATH", "/nonexistent:/bin:/usr/bin"}});
  EXPECT_TRUE(find_executable("sh", env).ok());
  EXPECT_EQ(find_executable("no-such-command-xyz", env).error().exit_code, 127);
  const std::string plain =
      std::filesystem::temp_directory_path() / ("tv-noexec-" + std::to_string(::getpid()));
  std::ofstream(plain) << "data";
  ::chmod(plain.c_str(), 0644);
  auto r = find_executable(plain, env);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().exit_code, 126);
  std::filesystem::remove(plain);
  EXPECT_EQ(find_executable("/tmp", env).error().exit_code, 126);
  EXPECT_EQ(find_executable("/no/such/file", env).error().exit_code, 127);
}

}  // namespace
}  // namespace tv
