#include "launcher/node/collective_evidence.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/escape.h"

namespace tv {
namespace {

bool text_at(const nlohmann::json& j, const char* key, std::string& out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return false;
  out = escape_control(it->get<std::string>()).substr(0, kMaxCollectiveText);
  return true;
}

}  // namespace

std::map<int, LastCollective> collectives_from(std::string_view output) {
  std::map<int, LastCollective> out;
  while (!output.empty()) {
    const auto nl = output.find('\n');
    const std::string_view line = output.substr(0, nl);
    output = nl == std::string_view::npos ? std::string_view{} : output.substr(nl + 1);
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    auto rank = j.find("rank"), seq = j.find("seq");
    if (rank == j.end() || seq == j.end() || !rank->is_number_integer() ||
        !seq->is_number_integer())
      continue;
    const auto r = rank->get<std::int64_t>(), s = seq->get<std::int64_t>();
    if (r < 0 || r > (1 << 20) || s < 0) continue;
    LastCollective c;
    c.seq = s;
    if (!text_at(j, "op", c.op) || !text_at(j, "group", c.group) || !text_at(j, "state", c.state))
      continue;
    out[static_cast<int>(r)] = std::move(c);
  }
  return out;
}

void add_collectives(std::vector<RankEvidence>& ranks, const std::map<int, LastCollective>& found,
                     int node_rank) {
  for (const auto& [rank_of_dump, c] : found) {
    const int rank = rank_of_dump;  // a structured binding is not captured (clang 14)
    auto it = std::find_if(ranks.begin(), ranks.end(),
                           [rank](const RankEvidence& r) { return r.rank == rank; });
    if (it == ranks.end()) {
      RankEvidence e;
      e.rank = rank;
      e.node_rank = node_rank;
      it = ranks.insert(ranks.end(), std::move(e));
    }
    it->collective = c;
  }
}

}  // namespace tv
