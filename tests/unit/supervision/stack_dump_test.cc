#include "launcher/supervision/stack_dump.h"

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

}  // namespace
}  // namespace tv
