#include "launcher/rendezvous/membership.h"

#include <algorithm>
#include <iterator>

namespace tv::rdzv {

Membership::Membership(int min_nodes, int max_nodes, int spares)
    : min_(std::max(1, min_nodes)),
      max_(std::max(std::max(1, min_nodes), max_nodes)),
      spares_(std::clamp(spares, 0, max_ - 1)) {}

void Membership::joined(int slot) {
  present_.insert(slot);
  joined_at_[slot] = joins_++;
}

void Membership::left(int slot) {
  present_.erase(slot);
  members_.erase(slot);
  rank_of_.erase(slot);
  joined_at_.erase(slot);
}

bool Membership::full() const {
  if (!with_spares()) return present() >= max_;
  for (int slot = 0; slot < world(); ++slot)
    if (!present_.contains(slot)) return false;
  return true;
}

void Membership::form() {
  if (with_spares()) return form_with_spares();
  members_ = present_;
}

// Each rank keeps its holder; a free rank goes to its own slot at generation 0 (when present),
// else to the next spare.
void Membership::form_with_spares() {
  if (was_member_.empty())  // generation 0: each slot below N holds its own rank
    for (int rank = 0; rank < world(); ++rank)
      if (present_.contains(rank)) rank_of_[rank] = rank;
  std::set<int> held;
  for (const auto& [slot, rank] : rank_of_) held.insert(rank);
  for (int rank = 0; rank < world(); ++rank) {
    if (held.contains(rank)) continue;
    const auto who = next_spare();
    if (!who) break;  // fewer than N present: not enough() (the coordinator does not form)
    rank_of_[*who] = rank;
  }
  members_.clear();
  for (const auto& [slot, rank] : rank_of_) {
    members_.insert(slot);
    was_member_.insert(slot);
  }
}

// A present node holding no rank: one that was a member before first, then the earliest joined.
std::optional<int> Membership::next_spare() const {
  std::optional<int> best;
  auto before = [this](int a, int b) {
    const bool ma = was_member_.contains(a), mb = was_member_.contains(b);
    if (ma != mb) return ma;
    return joined_at_.at(a) < joined_at_.at(b);
  };
  for (int slot : present_)
    if (!rank_of_.contains(slot) && (!best || before(slot, *best))) best = slot;
  return best;
}

std::optional<int> Membership::node_rank(int slot) const {
  if (with_spares()) {
    auto it = rank_of_.find(slot);
    if (it == rank_of_.end()) return std::nullopt;
    return it->second;
  }
  auto it = members_.find(slot);
  if (it == members_.end()) return std::nullopt;
  return static_cast<int>(std::distance(members_.begin(), it));
}

std::string Membership::ranks_text() const {
  std::string out;
  for (int slot : members_) {
    // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict) on a temporary's concatenation.
    if (!out.empty()) out += ' ';
    out += std::to_string(slot);
    out += "->";
    out += std::to_string(node_rank(slot).value_or(-1));
  }
  return out;
}

}  // namespace tv::rdzv
