// The torch version as torch/version.py writes it (health/torch_version.h).
#include "health/torch_version.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(TorchVersion, ParsesMajorAndMinor) {
  auto v = parse_torch_version("2.11.0+cu128");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 2);
  EXPECT_EQ(v->minor, 11);
  EXPECT_EQ(v->text, "2.11.0+cu128");
  EXPECT_EQ(parse_torch_version("1.13.1")->minor, 13);
  EXPECT_EQ(parse_torch_version("2.2.0a0+git1234")->minor, 2);
  EXPECT_EQ(parse_torch_version("2.6")->minor, 6);
}

TEST(TorchVersion, RefusesWhatIsNotAVersion) {
  for (const char* bad : {"", "2", "x.1", "2.", "2.x", ".1", "99999.1"})
    EXPECT_FALSE(parse_torch_version(bad)) << bad;
}

TEST(TorchVersion, TheAnswerSaysWhetherTheModuleIsThereWithOrWithoutTorch) {
  auto both = parse_python_answer("module=found\n2.11.0+cu128\ncuda=12.8\nnccl=\n");
  ASSERT_TRUE(both.module_found.has_value());
  EXPECT_TRUE(*both.module_found);
  ASSERT_TRUE(both.torch.has_value());
  EXPECT_EQ(both.torch->minor, 11);
  EXPECT_EQ(both.torch->cuda, "12.8");
  auto no_torch = parse_python_answer("module=missing\r\n");
  ASSERT_TRUE(no_torch.module_found.has_value());
  EXPECT_FALSE(*no_torch.module_found);
  EXPECT_FALSE(no_torch.torch.has_value());
  auto not_asked = parse_python_answer("2.10.0+cpu\ncuda=\nnccl=\n");
  EXPECT_FALSE(not_asked.module_found.has_value());
  EXPECT_TRUE(not_asked.torch.has_value());
  EXPECT_FALSE(parse_python_answer("module=perhaps\n").module_found.has_value());
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

TEST(TorchVersion, TheChildsAnswerCarriesCudaAndNccl) {
  auto v = parse_torch_answer("2.11.0+cu128\ncuda=12.8\nnccl=2.26.2\n");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->text, "2.11.0+cu128");
  EXPECT_EQ(v->cuda, "12.8");
  EXPECT_EQ(v->nccl, "2.26.2");
  auto cpu = parse_torch_answer("2.10.0+cpu\r\ncuda=\nnccl=\n");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->text, "2.10.0+cpu");
  EXPECT_EQ(cpu->cuda, "");
  EXPECT_EQ(parse_torch_answer("1.13.1\n")->minor, 13);  // an older answer: the version alone
  EXPECT_FALSE(parse_torch_answer(""));
  EXPECT_FALSE(parse_torch_answer("Traceback\n"));
}

}  // namespace
}  // namespace tv
