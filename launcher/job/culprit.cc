#include "launcher/job/culprit.h"

#include <algorithm>
#include <map>

namespace tv {
namespace {

constexpr std::size_t kNamedAtMost = 4;  // culprits named one by one; more are counted

std::string who(const RankEvidence& r) {
  return "rank " + std::to_string(r.rank) + " on node " + std::to_string(r.node_rank);
}

std::string where(const RankEvidence& r) {
  if (r.silent) return " wrote no stack within 3 s (stopped, or stuck outside Python)";
  return r.frame.empty() ? " is outside the user's code" : " is in " + r.frame;
}

std::string name_all(const std::vector<const RankEvidence*>& culprits) {
  std::string out;
  for (std::size_t i = 0; i < culprits.size() && i < kNamedAtMost; ++i) {
    if (i) out += "; ";
    out += who(*culprits[i]);
    out += where(*culprits[i]);
  }
  if (culprits.size() > kNamedAtMost)
    out += "; and " + std::to_string(culprits.size() - kNamedAtMost) + " more rank(s)";
  return out;
}

// The place most answering ranks are in, with how many are there.
std::pair<std::string, std::size_t> commonest(const std::vector<RankEvidence>& ranks) {
  std::map<std::string, std::size_t> count;
  for (const auto& r : ranks)
    if (!r.silent) ++count[r.frame];
  std::pair<std::string, std::size_t> best{"", 0};
  for (const auto& [frame, n] : count)
    if (n > best.second) best = {frame, n};
  return best;
}

// Rule 0, the flight recorder: in a process group two or more ranks' dumps recorded, the furthest
// collective any of them entered; the ranks whose last one is behind it never entered it. The
// group with the most ranks recorded is looked at first (the default group, as a rule).
std::optional<std::string> by_collective(const std::vector<RankEvidence>& ranks) {
  std::map<std::string, std::vector<const RankEvidence*>> groups;
  for (const auto& r : ranks)
    if (r.collective.seq >= 0) groups[r.collective.group].push_back(&r);
  std::vector<const std::vector<const RankEvidence*>*> order;
  for (const auto& [name, members] : groups) order.push_back(&members);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->size() > b->size(); });
  for (const auto* members : order) {
    if (members->size() < 2) break;
    const RankEvidence* furthest = *std::max_element(
        members->begin(), members->end(),
        [](const auto* a, const auto* b) { return a->collective.seq < b->collective.seq; });
    std::vector<const RankEvidence*> behind;
    for (const auto* r : *members)
      if (r->collective.seq < furthest->collective.seq) behind.push_back(r);
    if (behind.empty()) continue;
    const LastCollective& c = furthest->collective;
    std::string line;
    for (std::size_t i = 0; i < behind.size() && i < kNamedAtMost; ++i) {
      if (i) line += "; ";
      const RankEvidence& r = *behind[i];
      line += who(r) + " never entered " + c.op + " #" + std::to_string(c.seq) +
              " of process group " + c.group + " (its last: #" + std::to_string(r.collective.seq) +
              ", " + r.collective.state + ")";
      if (!r.frame.empty()) line += " and is in " + r.frame;
    }
    if (behind.size() > kNamedAtMost)
      line += "; and " + std::to_string(behind.size() - kNamedAtMost) + " more rank(s)";
    return line + "; every other rank of the group entered it and waits in it";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> decide_culprit(const std::vector<RankEvidence>& ranks) {
  if (ranks.size() < 2) return std::nullopt;
  if (auto line = by_collective(ranks)) return line;
  const auto [place, many] = commonest(ranks);
  std::vector<const RankEvidence*> culprits;
  for (const auto& r : ranks)
    if (r.silent) culprits.push_back(&r);
  // Rule 2 only where rule 1 named nobody: the ranks outside the majority's place.
  if (culprits.empty() && 2 * many > ranks.size())
    for (const auto& r : ranks)
      if (r.frame != place) culprits.push_back(&r);
  // Nobody answered, or nothing stands out: no single place the job waited for.
  if (culprits.empty() || many == 0) return std::nullopt;
  std::string line = name_all(culprits);
  line += "; every other rank waits ";
  line += place.empty() ? std::string("outside the user's code") : "in " + place;
  return line;
}

}  // namespace tv
