// rdzv::Membership: which nodes make up each generation of a multi-node job, and each one's node
// rank in it (docs/coordination.md, "Elastic membership" and "Hot spare nodes"). Pure: the
// coordinator (rdzv_coordinator.h) tells it who joined and who was lost, and asks it when a
// generation may form and what every node's rank is then. The one place of this rule.
//
// A node is known by its slot: the node rank it joined with (given, or assigned in join order),
// which its frames carry for the whole job. Three kinds of world:
// - fixed (--nnodes N): every node is a member of every generation; its rank is its slot.
// - elastic (--nnodes MIN:MAX): a generation's members are the nodes present; their ranks are
//   their slots renumbered contiguously in slot order (a lost node's rank is gone).
// - with spares (--nnodes N --spare-nodes K): N ranks, each held by one member for as long as it
//   is present; the other nodes present are spares (slots N..N+K-1, or any slot of a node that
//   joined again). A lost member's rank goes, at the next formation, to a spare: one that was a
//   member before first, then the earliest joined. At generation 0 rank r goes to slot r when it
//   is present: generation 0 waits for slots 0..N-1, or, once N nodes are present, for the last
//   call (--rdzv-last-call) to pass. WORLD_SIZE and every other member's rank stay as they were.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

namespace tv::rdzv {

class Membership {
 public:
  // `max_nodes`: the slots (MAX, or N + spares); `spares`: K of them are spares (0: none).
  Membership(int min_nodes, int max_nodes, int spares = 0);

  bool elastic() const { return min_ < world(); }
  bool with_spares() const { return spares_ > 0; }
  bool fixed() const { return !elastic() && !with_spares(); }
  int min_nodes() const { return min_; }
  int max_nodes() const { return max_; }
  int world() const { return max_ - spares_; }  // the ranks a generation has at most
  int spares() const { return spares_; }

  void joined(int slot);  // present from now on; a member from the next formation, or a spare
  void left(int slot);    // gone: neither present nor a member
  int present() const { return static_cast<int>(present_.size()); }
  // Generation 0 may form at once: every slot present (with spares: slots 0..N-1; with N others
  // present, after the last call).
  bool full() const;
  // A generation can form: at least MIN present (with spares: N).
  bool enough() const { return present() >= (with_spares() ? world() : min_); }
  // Present nodes that are not members of the formed generation (joined while it ran; spares).
  int waiting() const { return present() - members(); }

  // The next generation's members: every present node, or (with spares) the holders of its N
  // ranks, a lost member's rank given to a spare.
  void form();
  int members() const { return static_cast<int>(members_.size()); }
  bool member(int slot) const { return members_.contains(slot); }
  // Its node rank in the formed generation; none when it is not a member.
  std::optional<int> node_rank(int slot) const;
  // "slot -> rank" of every member, for a log line: "0->0 2->1".
  std::string ranks_text() const;

 private:
  void form_with_spares();
  std::optional<int> next_spare() const;
  int min_;
  int max_;
  int spares_;
  std::set<int> present_;
  std::set<int> members_;
  std::map<int, int> rank_of_;     // with spares: slot -> the rank it holds
  std::map<int, long> joined_at_;  // slot -> its join's order
  std::set<int> was_member_;       // slots that held a rank before
  long joins_ = 0;
};

}  // namespace tv::rdzv
