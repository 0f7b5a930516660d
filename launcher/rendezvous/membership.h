// rdzv::Membership: which nodes make up each generation of a multi-node job, and each one's node
// rank in it (docs/coordination.md, "Elastic membership"). Pure: the coordinator
// (rdzv_coordinator.h) tells it who joined and who was lost, and asks it when a generation may
// form and what every node's rank is then. The one place of this rule: a later kind of member
// (a hot spare) is added here.
//
// A node is known by its slot: the node rank it joined with (given, or assigned in join order),
// which its frames carry for the whole job. A generation's node ranks are its members' slots
// renumbered contiguously in slot order: a lost node's rank is gone, the others keep their order.
// With min == max (--nnodes N) every node is a member of every generation and its rank is its
// slot, as it always was.
#pragma once

#include <optional>
#include <set>
#include <string>

namespace tv::rdzv {

class Membership {
 public:
  Membership(int min_nodes, int max_nodes);

  bool elastic() const { return min_ < max_; }
  int min_nodes() const { return min_; }
  int max_nodes() const { return max_; }

  void joined(int slot);  // present from now on; a member from the next formation
  void left(int slot);    // gone: neither present nor a member
  int present() const { return static_cast<int>(present_.size()); }
  bool full() const { return present() >= max_; }
  bool enough() const { return present() >= min_; }
  // Present nodes that are not members of the formed generation (joined while it ran).
  int waiting() const { return present() - members(); }

  // The next generation's members: every present node.
  void form() { members_ = present_; }
  int members() const { return static_cast<int>(members_.size()); }
  bool member(int slot) const { return members_.contains(slot); }
  // Its node rank in the formed generation; none when it is not a member.
  std::optional<int> node_rank(int slot) const;
  // "slot -> rank" of every member, for a log line: "0->0 2->1".
  std::string ranks_text() const;

 private:
  int min_;
  int max_;
  std::set<int> present_;
  std::set<int> members_;
};

}  // namespace tv::rdzv
