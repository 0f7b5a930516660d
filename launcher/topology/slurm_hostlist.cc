#include "launcher/topology/slurm_hostlist.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "common/exit_codes.h"

namespace tv {
namespace {

// One bracket group's numbers, as strings already padded.
struct Range {
  unsigned long long lo = 0, hi = 0;
  size_t width = 0;  // 0: no padding
};

// A piece of an item: literal text, or a group of ranges.
struct Piece {
  std::string literal;
  std::vector<Range> ranges;  // empty for a literal
  unsigned long long count() const {
    if (ranges.empty()) return 1;
    unsigned long long n = 0;
    for (const auto& r : ranges) n += r.hi - r.lo + 1;  // each bounded by the caller's cap
    return n;
  }
};

struct Parser {
  const std::string& text;
  const std::string& what;
  size_t max_hosts;

  Error fail(const std::string& why) const {
    return Error{ErrorKind::kConfig, what + "=\"" + text + "\": " + why +
                                         " (expected a Slurm hostlist such as "
                                         "\"gpu-[001-004,007],head\")"};
  }
};

bool all_digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return false;  // 18 digits always fit in 64 bits
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

unsigned long long to_number(std::string_view s) {
  unsigned long long v = 0;
  for (char c : s) v = v * 10 + static_cast<unsigned long long>(c - '0');
  return v;
}

Result<Range> parse_range(const Parser& p, std::string_view r) {
  auto dash = r.find('-');
  std::string_view lo = r.substr(0, dash);
  std::string_view hi = dash == std::string_view::npos ? lo : r.substr(dash + 1);
  if (!all_digits(lo) || !all_digits(hi))
    return p.fail("bad range \"" + std::string(r) + "\" in brackets");
  Range out{to_number(lo), to_number(hi), lo.size() > 1 && lo[0] == '0' ? lo.size() : 0};
  if (out.hi < out.lo) return p.fail("descending range \"" + std::string(r) + "\"");
  if (out.hi - out.lo >= p.max_hosts)
    return p.fail("range \"" + std::string(r) + "\" has more than " + std::to_string(p.max_hosts) +
                  " hosts");
  return out;
}

Result<Piece> parse_group(const Parser& p, std::string_view inner) {
  Piece piece;
  unsigned long long total = 0;
  size_t start = 0;
  while (start <= inner.size()) {
    size_t comma = inner.find(',', start);
    if (comma == std::string_view::npos) comma = inner.size();
    auto r = parse_range(p, inner.substr(start, comma - start));
    if (!r) return r.error();
    total += r->hi - r->lo + 1;
    if (total > p.max_hosts) return p.fail("more than " + std::to_string(p.max_hosts) + " hosts");
    piece.ranges.push_back(*r);
    start = comma + 1;
  }
  return piece;
}

// Splits one item into literal and bracket pieces.
Result<std::vector<Piece>> parse_item(const Parser& p, std::string_view item) {
  std::vector<Piece> pieces;
  size_t i = 0;
  while (i < item.size()) {
    if (item[i] == ']') return p.fail("unmatched ']'");
    if (item[i] != '[') {
      size_t next = item.find_first_of("[]", i);
      if (next == std::string_view::npos) next = item.size();
      pieces.push_back(Piece{std::string(item.substr(i, next - i)), {}});
      i = next;
      continue;
    }
    size_t close = item.find(']', i);
    if (close == std::string_view::npos) return p.fail("unmatched '['");
    std::string_view inner = item.substr(i + 1, close - i - 1);
    if (inner.find('[') != std::string_view::npos) return p.fail("nested '['");
    auto g = parse_group(p, inner);
    if (!g) return g.error();
    pieces.push_back(std::move(*g));
    i = close + 1;
  }
  return pieces;
}

// Splits at commas outside brackets; refuses empty items and stray characters.
Result<std::vector<std::string_view>> split_items(const Parser& p) {
  std::vector<std::string_view> items;
  std::string_view all(p.text);
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= all.size(); ++i) {
    char c = i < all.size() ? all[i] : ',';
    if (c == '[') ++depth;
    if (c == ']' && --depth < 0) return p.fail("unmatched ']'");
    if (c != ',' || depth > 0) {
      if (std::isspace(static_cast<unsigned char>(c)) ||
          std::iscntrl(static_cast<unsigned char>(c)))
        return p.fail("white space or a control character at offset " + std::to_string(i));
      continue;
    }
    if (i == start) return p.fail("empty host name at offset " + std::to_string(i));
    items.push_back(all.substr(start, i - start));
    start = i + 1;
  }
  if (depth > 0) return p.fail("unmatched '['");
  return items;
}

std::string padded(unsigned long long v, size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// Appends every host of one item (cartesian product, last group fastest).
void expand_pieces(const std::vector<Piece>& pieces, size_t k, std::string& prefix,
                   std::vector<std::string>& out) {
  if (k == pieces.size()) {
    out.push_back(prefix);
    return;
  }
  const size_t keep = prefix.size();
  if (pieces[k].ranges.empty()) {
    prefix += pieces[k].literal;
    expand_pieces(pieces, k + 1, prefix, out);
  } else {
    for (const auto& r : pieces[k].ranges)
      for (unsigned long long v = r.lo;; ++v) {
        prefix += padded(v, r.width);
        expand_pieces(pieces, k + 1, prefix, out);
        prefix.resize(keep);
        if (v == r.hi) break;
      }
  }
  prefix.resize(keep);
}

// Host count and longest name of an item, checked against the caps before expanding.
Status check_size(const Parser& p, const std::vector<Piece>& pieces, size_t hosts_so_far) {
  unsigned long long n = 1;
  size_t longest = 0;
  for (const auto& piece : pieces) {
    n *= piece.count();  // each factor <= max_hosts, checked below before it can overflow
    if (n > p.max_hosts - hosts_so_far)
      return p.fail("more than " + std::to_string(p.max_hosts) + " hosts");
    size_t w = piece.literal.size();
    for (const auto& r : piece.ranges) w = std::max({w, r.width, std::to_string(r.hi).size()});
    longest += w;
  }
  if (longest > kMaxHostNameLength)
    return p.fail("a host name longer than " + std::to_string(kMaxHostNameLength) + " characters");
  return ok_status();
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(const std::string& text, const std::string& what,
                                                 size_t max_hosts) {
  const Parser p{text, what, max_hosts};
  if (text.empty()) return p.fail("empty");
  auto items = split_items(p);
  if (!items) return items.error();
  std::vector<std::string> out;
  for (auto item : *items) {
    auto pieces = parse_item(p, item);
    if (!pieces) return pieces.error();
    if (auto st = check_size(p, *pieces, out.size()); !st) return st.error();
    std::string prefix;
    expand_pieces(*pieces, 0, prefix, out);
  }
  return out;
}

}  // namespace tv
