#include "launcher/rendezvous/membership.h"

#include <algorithm>
#include <iterator>

namespace tv::rdzv {

Membership::Membership(int min_nodes, int max_nodes)
    : min_(std::max(1, min_nodes)), max_(std::max(std::max(1, min_nodes), max_nodes)) {}

void Membership::joined(int slot) { present_.insert(slot); }

void Membership::left(int slot) {
  present_.erase(slot);
  members_.erase(slot);
}

std::optional<int> Membership::node_rank(int slot) const {
  auto it = members_.find(slot);
  if (it == members_.end()) return std::nullopt;
  return static_cast<int>(std::distance(members_.begin(), it));
}

std::string Membership::ranks_text() const {
  std::string out;
  int rank = 0;
  for (int slot : members_) {
    // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict) on a temporary's concatenation.
    if (!out.empty()) out += ' ';
    out += std::to_string(slot);
    out += "->";
    out += std::to_string(rank++);
  }
  return out;
}

}  // namespace tv::rdzv
