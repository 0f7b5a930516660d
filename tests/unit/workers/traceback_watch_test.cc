// TracebackWatch (launcher/workers/traceback_watch.h): the last Python traceback in a stderr
// stream, as CPython prints it, fed line by line.
#include "launcher/workers/traceback_watch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tv {
namespace {

TracebackWatch fed(const std::vector<std::string>& lines) {
  TracebackWatch w;
  for (const auto& l : lines) w.line(l);
  return w;
}

TEST(TracebackWatch, TheExceptionLineIsTheFirstUnindentedLineAfterTheHeader) {
  const auto w =
      fed({"loading data", "Traceback (most recent call last):",
           "  File \"/x/train.py\", line 9, in <module>", "    main()", "    ^^^^^^",
           "RuntimeError: NCCL error: unhandled system error", "a line printed afterwards"});
  EXPECT_EQ(w.exception(), "RuntimeError: NCCL error: unhandled system error");
  ASSERT_EQ(w.last().size(), 5u);
  EXPECT_EQ(w.last().front(), "Traceback (most recent call last):");
}

TEST(TracebackWatch, NoTracebackNoException) {
  EXPECT_EQ(fed({"RuntimeError: printed, not raised", "  indented"}).exception(), "");
  EXPECT_TRUE(fed({}).last().empty());
}

TEST(TracebackWatch, TheLastOfChainedTracebacksWins) {
  const auto w = fed(
      {"Traceback (most recent call last):", "  File \"a.py\", line 1", "KeyError: 'x'", "",
       "During handling of the above exception, another exception occurred:", "",
       "Traceback (most recent call last):", "  File \"a.py\", line 3", "ValueError: bad batch 7"});
  EXPECT_EQ(w.exception(), "ValueError: bad batch 7");
}

TEST(TracebackWatch, OneCutOffBeforeItsExceptionLeavesThePreviousOne) {
  // A SIGKILL while the second one was written; an empty line ends it too.
  EXPECT_EQ(fed({"Traceback (most recent call last):", "  File \"a.py\", line 1", "OSError: one",
                 "Traceback (most recent call last):", "  File \"a.py\", line 2"})
                .exception(),
            "OSError: one");
  EXPECT_EQ(
      fed({"Traceback (most recent call last):", "  File \"a.py\", line 2", "", "not an exception"})
          .exception(),
      "");
}

TEST(TracebackWatch, AMainScriptsSyntaxErrorHasNoHeader) {
  const auto w = fed({"  File \"/x/train.py\", line 3", "    def f(", "         ^",
                      "SyntaxError: '(' was never closed"});
  EXPECT_EQ(w.exception(), "SyntaxError: '(' was never closed");
}

TEST(TracebackWatch, APrefixedHeaderAndItsPrefixedLines) {
  const auto w =
      fed({"[worker] Traceback (most recent call last):", "[worker]   File \"a.py\", line 1",
           "[worker] ZeroDivisionError: division"});
  EXPECT_EQ(w.exception(), "ZeroDivisionError: division");
}

TEST(TracebackWatch, AnExceptionGroupKeepsItsOwnLineNotItsSubExceptions) {
  const auto w = fed({"  + Exception Group Traceback (most recent call last):",
                      "  |   File \"a.py\", line 1, in <module>",
                      "  | ExceptionGroup: two failed (2 sub-exceptions)",
                      "  +-+---------------- 1 ----------------",
                      "    | Traceback (most recent call last):", "    |   File \"a.py\", line 2",
                      "    | ValueError: one", "    +------------------------------------",
                      "after the group"});
  EXPECT_EQ(w.exception(), "ExceptionGroup: two failed (2 sub-exceptions)");
}

TEST(TracebackWatch, ADeepTracebackKeepsItsHeaderAndItsLastLines) {
  TracebackWatch w;
  w.line("Traceback (most recent call last):");
  for (int i = 0; i < 500; ++i) w.line("  File \"r.py\", line " + std::to_string(i));
  w.line("RecursionError: maximum recursion depth exceeded");
  ASSERT_EQ(w.last().size(), TracebackWatch::kMaxLines);
  EXPECT_EQ(w.last().front(), "Traceback (most recent call last):");
  EXPECT_EQ(w.last()[w.last().size() - 2], "  File \"r.py\", line 499");
  EXPECT_EQ(w.exception(), "RecursionError: maximum recursion depth exceeded");
}

// A log's tail (a rank's stderr.log): the last traceback's exception line, a first line that may
// be cut skipped, binary lines no part of a traceback, CRLF endings.
TEST(TracebackWatch, LastExceptionOfALogsTail) {
  const std::string tb =
      "Traceback (most recent call last):\n  File \"/x/t.py\", line 3, in <module>\n"
      "ValueError: rank 3 fails\n";
  EXPECT_EQ(last_exception("step 1\n" + tb + "exiting\n", false), "ValueError: rank 3 fails");
  const std::string header_first = "Traceback (most recent call last):\nKeyError: 'k'\n";
  EXPECT_EQ(last_exception(header_first, false), "KeyError: 'k'");
  EXPECT_EQ(last_exception(header_first, true), "");  // its header was the cut first line
  EXPECT_EQ(last_exception("last call):\n" + tb, true), "ValueError: rank 3 fails");
  EXPECT_EQ(last_exception("no traceback\n", false), "");
  EXPECT_EQ(last_exception("", false), "");
  std::string crlf = tb;
  for (std::size_t at = 0; (at = crlf.find('\n', at)) != std::string::npos; at += 2)
    crlf.insert(at, "\r");
  EXPECT_EQ(last_exception(crlf, false), "ValueError: rank 3 fails");
  std::string binary = "Traceback (most recent call last):\n  File \"t.py\", line 1\n";
  binary += std::string(
                "\x7f"
                "ELF\0\x01\x02 junk",
                12) +
            "\nKeyError: not after binary\n";
  EXPECT_EQ(last_exception(binary, false), "");
  EXPECT_EQ(last_exception(std::string(100000, '\0'), false), "");
}

}  // namespace
}  // namespace tv
