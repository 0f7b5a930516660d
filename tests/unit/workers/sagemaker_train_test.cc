// SageMaker's `train` convention: the script from sagemaker_program, hyperparameters as args.
#include "launcher/workers/sagemaker_train.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "common/exit_codes.h"
#include "tests/unit/fakes/fake_file_system.h"

namespace tv {
namespace {

using testing::FakeFileSystem;

const char* kHp = "/opt/ml/input/config/hyperparameters.json";

std::vector<std::string> command(const FakeFileSystem& fs) {
  auto c = sagemaker_train_command(fs);
  EXPECT_TRUE(c.ok()) << (c ? "" : c.error().message);
  return c ? *c : std::vector<std::string>{};
}

TEST(SageMakerTrain, ScriptAndDecodedHyperparametersSortedWithoutSageMakerOnes) {
  FakeFileSystem fs;
  fs.add_file(kHp, R"({"sagemaker_program": "\"train.py\"", "sagemaker_region": "\"us-west-2\"",
                  "lr": "0.001", "epochs": "\"10\"", "fp16": "true", "name": "plain text", "n": 3})");
  fs.add_file("/opt/ml/code/train.py", "");
  EXPECT_EQ(command(fs),
            (std::vector<std::string>{"/opt/ml/code/train.py", "--epochs", "10", "--fp16", "True",
                                      "--lr", "0.001", "--n", "3", "--name", "plain text"}));
}

TEST(SageMakerTrain, ShellScriptRunsUnderSh) {
  FakeFileSystem fs;
  fs.add_file(kHp, R"({"sagemaker_program": "train.sh"})");
  fs.add_file("/opt/ml/code/train.sh", "");
  EXPECT_EQ(command(fs), (std::vector<std::string>{"/bin/sh", "/opt/ml/code/train.sh"}));
}

Error error_for(const FakeFileSystem& fs) {
  auto c = sagemaker_train_command(fs);
  EXPECT_FALSE(c.ok());
  return c ? Error{ErrorKind::kFailed, ""} : c.error();
}

TEST(SageMakerTrain, SaysWhatIsMissing) {
  FakeFileSystem none;
  Error e = error_for(none);
  EXPECT_EQ(e.kind, ErrorKind::kNotFound);
  EXPECT_NE(e.message.find("no program named 'train'"), std::string::npos);
  EXPECT_NE(e.message.find(kHp), std::string::npos);

  FakeFileSystem no_program;
  no_program.add_file(kHp, R"({"epochs": "3"})");
  e = error_for(no_program);
  EXPECT_EQ(e.kind, ErrorKind::kConfig);
  EXPECT_NE(e.message.find("no \"sagemaker_program\""), std::string::npos);

  FakeFileSystem no_script;
  no_script.add_file(kHp, R"({"sagemaker_program": "\"train.py\""})");
  e = error_for(no_script);
  EXPECT_EQ(e.kind, ErrorKind::kNotFound);
  EXPECT_NE(e.message.find("/opt/ml/code/train.py does not exist"), std::string::npos);

  FakeFileSystem bad;
  bad.add_file(kHp, "[1, 2");
  EXPECT_EQ(error_for(bad).kind, ErrorKind::kConfig);

  FakeFileSystem escape;
  escape.add_file(kHp, R"({"sagemaker_program": "../../etc/passwd"})");
  EXPECT_NE(error_for(escape).message.find("expected a file name inside /opt/ml/code"),
            std::string::npos);
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

// The real file system: a FIFO where hyperparameters.json should be is refused at once.
TEST(SageMakerTrain, HyperparametersThatAreAFifoAreRefusedNotWaitedFor) {
  const std::string dir = ::testing::TempDir() + "tv-hp-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  SageMakerPaths paths;
  paths.hyperparameters = dir + "/hyperparameters.json";
  paths.code_dir = dir;
  ASSERT_EQ(::mkfifo(paths.hyperparameters.c_str(), 0600), 0);
  auto c = sagemaker_train_command(RealFileSystem(), paths);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(paths.hyperparameters + ": not a regular file (a FIFO)"),
            std::string::npos)
      << c.error().message;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tv
