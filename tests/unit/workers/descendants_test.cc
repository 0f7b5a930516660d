// The leftover-process walk against real processes: a child and a grandchild of this test.
#include "launcher/workers/descendants.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace tv {
namespace {

// A child that forks a grandchild; both wait to be killed. The grandchild's pid comes back
// through a pipe.
struct Tree {
  pid_t child = -1;
  pid_t grandchild = -1;
  Tree() {
    int p[2];
    if (::pipe(p) != 0) return;
    child = ::fork();
    if (child == 0) {
      ::setpgid(0, 0);  // its own group, as Init::spawn gives every worker
      const pid_t gc = ::fork();
      if (gc == 0) {
        ::pause();
        ::_exit(0);
      }
      (void)!::write(p[1], &gc, sizeof gc);
      ::pause();
      ::_exit(0);
    }
    ::close(p[1]);
    if (::read(p[0], &grandchild, sizeof grandchild) != sizeof grandchild) grandchild = -1;
    ::close(p[0]);
  }
  ~Tree() {
    if (grandchild > 0) ::kill(grandchild, SIGKILL);
    if (child > 0) {
      ::kill(child, SIGKILL);
      ::waitpid(child, nullptr, 0);
    }
  }
};

TEST(ReadSubtree, HoldsChildAndGrandchildWithTheirParentsAsTheWholeTableDoes) {
  if (!read_subtree(::getpid())) GTEST_SKIP() << "no /proc/PID/task/TID/children here";
  Tree t;
  ASSERT_GT(t.child, 0);
  ASSERT_GT(t.grandchild, 0);
  const auto sub = *read_subtree(::getpid());
  EXPECT_EQ(sub.at(t.child).ppid, ::getpid());
  EXPECT_EQ(sub.at(t.grandchild).ppid, t.child);
  EXPECT_EQ(descendants_of(::getpid(), parents_of(sub)),
            descendants_of(::getpid(), parents_of(read_process_table())));
  EXPECT_EQ(sub.size(), 2u);  // nothing from elsewhere on the host
}

TEST(HasChildren, TrueWhileAChildLivesFalseOnceItIsReaped) {
  {
    Tree t;
    ASSERT_GT(t.child, 0);
    EXPECT_TRUE(has_children());
  }
  EXPECT_FALSE(has_children());
  EXPECT_EQ(kill_descendants(), 0);
}

TEST(KillDescendants, SparesItsOwnChildrenAndWhatIsBelowThem) {
  Tree t;
  ASSERT_GT(t.grandchild, 0);
  EXPECT_EQ(kill_descendants(NotLeftovers{{t.child}, 0}), 0);
  EXPECT_EQ(::kill(t.grandchild, 0), 0);
}

TEST(KillDescendants, KillsTheWholeTreeAndSparesNothingElse) {
  Tree t;
  ASSERT_GT(t.grandchild, 0);
  EXPECT_EQ(kill_descendants(), 2);
  int status = 0;
  ASSERT_EQ(::waitpid(t.child, &status, 0), t.child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  t.child = -1;
  t.grandchild = -1;
}

}  // namespace
}  // namespace tv
