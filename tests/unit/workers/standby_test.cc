// Warm standbys, the pure part: command shapes, the import-time environment rule, the activation
// message, option parsing and the pool's warm-or-cold decisions (each reason said once).
#include "launcher/workers/standby.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tv {
namespace {

TEST(PythonCommand, ScriptAndModuleShapesOnly) {
  auto s = python_command({"python3", "-u", "train.py", "--lr", "1"});
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->module);
  EXPECT_EQ(s->target, "train.py");
  auto m = python_command({"/usr/bin/python3", "-u", "-m", "pkg.train", "x"});
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->module);
  EXPECT_EQ(m->target, "pkg.train");
  EXPECT_FALSE(python_command({"./train.sh", "a"}));      // --no-python / not Python
  EXPECT_FALSE(python_command({"python3", "train.py"}));  // not what trainvisor builds
  EXPECT_FALSE(python_command({"python3", "-u", "-c", "print(1)"}));
  EXPECT_FALSE(python_command({"python3", "-u", "-m"}));
  EXPECT_FALSE(python_command({"python3", "-u", "-m", "bad-name"}));
  EXPECT_FALSE(python_command({"python3", "-u"}));
}

TEST(PythonCommand, AnInterpreterNamedAsTheFirstWordRunsPythonButIsNotWarmable) {
  EXPECT_TRUE(runs_python({"python3", "-u", "train.py"}));
  EXPECT_TRUE(runs_python({"python3", "train.py", "--lr", "1"}));
  EXPECT_TRUE(runs_python({"/usr/bin/python3.11", "-m", "pkg.train"}));
  EXPECT_TRUE(runs_python({"/isaac-sim/python.sh", "scripts/train.py"}));
  EXPECT_TRUE(runs_python({"python", "-c", "print(1)"}));
  EXPECT_FALSE(python_command({"/isaac-sim/python.sh", "scripts/train.py"}));
  EXPECT_FALSE(runs_python({"python3"}));  // the interactive interpreter: no worker
  EXPECT_FALSE(runs_python({"./train.sh", "a"}));
  EXPECT_FALSE(runs_python({"/opt/python3/bin/train", "a"}));  // a directory's name is not it
  EXPECT_FALSE(runs_python({}));
}

TEST(ImportEnv, PerAttemptVariablesAreIgnoredEverythingElseCounts) {
  Environment standby{{"OMP_NUM_THREADS", "1"},
                      {"MASTER_PORT", "29500"},
                      {"TORCHELASTIC_RESTART_COUNT", "0"},
                      {"RANK", "1"}};
  Environment rank = standby;
  rank.set("MASTER_PORT", "29511");
  rank.set("TORCHELASTIC_RESTART_COUNT", "1");
  rank.set("TRAINVISOR_RESUME_CHECKPOINT", "/ckpt/a.pt");
  EXPECT_EQ(import_env_difference(standby, rank), std::nullopt);
  rank.set("OMP_NUM_THREADS", "4");
  EXPECT_EQ(import_env_difference(standby, rank), "OMP_NUM_THREADS");
  rank.set("OMP_NUM_THREADS", "1");
  rank.set("LD_PRELOAD", "/x.so");  // only in the rank's
  EXPECT_EQ(import_env_difference(standby, rank), "LD_PRELOAD");
  rank.erase("LD_PRELOAD");
  rank.erase("RANK");  // only in the standby's
  EXPECT_EQ(import_env_difference(standby, rank), "RANK");
}

TEST(ActivationMessage, LengthPrefixedJsonWithSysArgvShape) {
  Environment env{{"A", "1"}, {"B", "x y"}};
  const std::string msg = activation_message(env, Environment{{"A", "0"}}, "/usr/bin/python3",
                                             {"python3", "-u", "train.py", "--x", "2"}, "/work");
  const auto nl = msg.find('\n');
  ASSERT_NE(nl, std::string::npos);
  EXPECT_EQ(std::stoul(msg.substr(0, nl)), msg.size() - nl - 1);
  auto j = nlohmann::json::parse(msg.substr(nl + 1));
  EXPECT_EQ(j["argv"], (std::vector<std::string>{"train.py", "--x", "2"}));
  EXPECT_EQ(j["orig_argv"],
            (std::vector<std::string>{"/usr/bin/python3", "-u", "train.py", "--x", "2"}));
  EXPECT_EQ(j["cwd"], "/work");
  EXPECT_EQ(j["env"]["B"], "x y");
  EXPECT_EQ(j["launch_env"], (nlohmann::json{{"A", "0"}}));
  // Bytes that are not UTF-8 never throw.
  Environment bad{{"X", std::string("\xff\xfe")}};
  EXPECT_NO_THROW(activation_message(bad, bad, "/p", {"p", "-u", "a.py"}, "/"));
}

TEST(WarmStandbyOptions, ModesAndImports) {
  auto c = parse_warm_standby(WarmMode::kAuto, "");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->mode, WarmMode::kAuto);
  EXPECT_EQ(c->imports, (std::vector<std::string>{"torch"}));
  c = parse_warm_standby(WarmMode::kOn, "transformers,isaaclab.app,torch");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->imports, (std::vector<std::string>{"torch", "transformers", "isaaclab.app"}));
  for (const char* imports : {"torch,", "a;b", "os.system('x')", "1abc", "a..b"}) {
    auto e = parse_warm_standby(WarmMode::kOn, imports);
    ASSERT_FALSE(e) << imports;
    EXPECT_EQ(e.error().exit_code(), 78) << imports;  // a bad value, as every option's
    EXPECT_NE(e.error().message.find("--warm-import"), std::string::npos);
  }
}

TEST(StandbyPool, ReadyCompatibleStandbyIsTakenOnce) {
  StandbyPool pool(2);
  Environment env{{"RANK", "0"}, {"MASTER_PORT", "1"}};
  pool.started(0, 100, env);
  EXPECT_EQ(pool.empty_ranks(), std::vector<int>{1});
  auto cold = pool.take(0, env);  // not ready yet: cold, standby kept for next time
  ASSERT_TRUE(std::holds_alternative<StandbyPool::Cold>(cold));
  EXPECT_TRUE(std::get<StandbyPool::Cold>(cold).first);
  EXPECT_EQ(std::get<StandbyPool::Cold>(cold).discard, -1);
  EXPECT_FALSE(std::get<StandbyPool::Cold>(pool.take(0, env)).first);  // said once
  pool.ready(100);
  Environment next = env;
  next.set("MASTER_PORT", "2");
  auto warm = pool.take(0, next);
  ASSERT_TRUE(std::holds_alternative<pid_t>(warm));
  EXPECT_EQ(std::get<pid_t>(warm), 100);
  EXPECT_EQ(pool.empty_ranks(), (std::vector<int>{0, 1}));
}

TEST(StandbyPool, DifferentImportEnvironmentDiscardsTheStandby) {
  StandbyPool pool(1);
  pool.started(0, 7, {{"OMP_NUM_THREADS", "1"}});
  pool.ready(7);
  auto got = pool.take(0, {{"OMP_NUM_THREADS", "8"}});
  ASSERT_TRUE(std::holds_alternative<StandbyPool::Cold>(got));
  const auto& c = std::get<StandbyPool::Cold>(got);
  EXPECT_EQ(c.discard, 7);
  EXPECT_NE(c.reason.find("OMP_NUM_THREADS"), std::string::npos);
  EXPECT_TRUE(pool.pids().empty());
}

TEST(StandbyPool, DeathAndDisableAreCold) {
  StandbyPool pool(1);
  pool.started(0, 9, {});
  auto died = pool.exited(9, "killed by signal 9");
  ASSERT_TRUE(died);
  EXPECT_TRUE(died->first);
  EXPECT_NE(died->reason.find("signal 9"), std::string::npos);
  EXPECT_FALSE(pool.exited(9, "again"));  // unknown pid now
  EXPECT_FALSE(pool.exited(12345, "orphan"));
  pool.started(0, 10, {});
  pool.ready(10);
  pool.disable("import torch failed");
  EXPECT_TRUE(pool.empty_ranks().empty());  // nothing more is prepared
  auto got = pool.take(0, {});
  ASSERT_TRUE(std::holds_alternative<StandbyPool::Cold>(got));
  EXPECT_EQ(std::get<StandbyPool::Cold>(got).reason, "import torch failed");
}

}  // namespace
}  // namespace tv
