#include "launcher/workers/stack_dump.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

// As Python 3.11's faulthandler writes it (all_threads=True), after worker_hook.py's header.
constexpr const char* kDump =
    "# trainvisor stacks: pid 4242 main thread 0x00007fcd2dcd3040\n"
    "Thread 0x00007fcd2da186c0 (most recent call first):\n"
    "  File \"/tmp/fh/t.py\", line 5 in other\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 975 in run\n"
    "\n"
    "Current thread 0x00007fcd2dcd3040 (most recent call first):\n"
    "  File \"/tmp/fh/t.py\", line 7 in tv_hang_here_for_test\n"
    "  File \"/tmp/fh/t.py\", line 9 in <module>\n";

TEST(StackDump, HeaderAndMainThreadFrame) {
  const auto h = last_stacks_header(kDump);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->pid, 4242);
  EXPECT_EQ(h->main_thread, "0x00007fcd2dcd3040");
  EXPECT_EQ(innermost_frame(kDump, h->main_thread), "tv_hang_here_for_test (/tmp/fh/t.py:7)");
  EXPECT_EQ(innermost_frame(kDump, "0x00007fcd2da186c0"), "other (/tmp/fh/t.py:5)");
}

TEST(StackDump, TheLastDumpAndTheLastRegistrationCount) {
  // A standby that became a worker registers again (a new header); the main thread that did not
  // take the signal is listed as "Thread".
  const std::string text = std::string(kDump) +
                           "# trainvisor stacks: pid 77 main thread 0x00007f0000000001\n"
                           "Current thread 0x00007f0000000002 (most recent call first):\n"
                           "  File \"/a b/x.py\", line 12 in loader\n\n"
                           "Thread 0x00007f0000000001 (most recent call first):\n"
                           "  File \"/a b/x.py\", line 30 in train_step\n";
  const auto h = last_stacks_header(text);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->pid, 77);
  EXPECT_EQ(innermost_frame(text, h->main_thread), "train_step (/a b/x.py:30)");
}

TEST(StackDump, NothingWithoutAHeaderOrTheThread) {
  EXPECT_FALSE(last_stacks_header(""));
  EXPECT_FALSE(last_stacks_header("Thread 0x1 (most recent call first):\n"));
  EXPECT_FALSE(last_stacks_header("# trainvisor stacks: pid x main thread 0x1\n"));
  EXPECT_FALSE(innermost_frame(kDump, "0x00007f00000000ff"));
  // The header alone: registered, never signalled.
  EXPECT_FALSE(innermost_frame("# trainvisor stacks: pid 1 main thread 0x1\n", "0x1"));
}

TEST(StackDump, TheInnermostUserFrameStepsOverTorchAndTheInterpreter) {
  // A CUDA hang as the H200 showed it: torch's synchronize, called from the user's train_step.
  const std::string text =
      "# trainvisor stacks: pid 9 main thread 0x00007f0000000001\n"
      "Current thread 0x00007f0000000001 (most recent call first):\n"
      "  File \"/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py\", line 1162 in "
      "synchronize\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/skrl/agents/ppo.py\", line 40 in update\n"
      "  File \"/usr/lib/python3.12/contextlib.py\", line 81 in inner\n"
      "  File \"<frozen runpy>\", line 88 in _run_code\n"
      "  File \"/work/my lib/python3x/train.py\", line 12 in train_step\n"
      "  File \"/work/my lib/python3x/train.py\", line 30 in <module>\n";
  EXPECT_EQ(innermost_frame(text, "0x00007f0000000001"),
            "synchronize (/usr/local/lib/python3.12/dist-packages/torch/cuda/__init__.py:1162)");
  EXPECT_EQ(innermost_user_frame(text, "0x00007f0000000001"),
            "train_step (/work/my lib/python3x/train.py:12)");
  // The user's own frame innermost: itself.
  EXPECT_EQ(innermost_user_frame(kDump, "0x00007fcd2dcd3040"),
            "tv_hang_here_for_test (/tmp/fh/t.py:7)");
}

TEST(StackDump, NoUserFrameWhenEveryFrameIsALibrarys) {
  const std::string text =
      "Current thread 0x1 (most recent call first):\n"
      "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
      "  File \"/usr/lib/python3/dist-packages/x.py\", line 2 in f\n";
  EXPECT_FALSE(innermost_user_frame(text, "0x1"));
  EXPECT_FALSE(innermost_user_frame(text, "0x2"));
  EXPECT_TRUE(library_file("/usr/lib/python3.11/threading.py"));
  EXPECT_TRUE(library_file("/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/a.py"));
  EXPECT_TRUE(library_file("/usr/lib/python3/dist-packages/a.py"));
  EXPECT_TRUE(library_file("<frozen importlib._bootstrap>"));
  EXPECT_TRUE(library_file("/w/.trainvisor/python/sitecustomize.py"));
  EXPECT_FALSE(library_file("/workspace/isaaclab/scripts/train.py"));
  EXPECT_FALSE(library_file("/srv/lib/python3-tools/train.py"));
}

}  // namespace
}  // namespace tv
