#include "checkpoint/pickle.h"

#include <bit>
#include <cstring>
#include <unordered_map>

#include "checkpoint/little_endian.h"
#include "common/exit_codes.h"

namespace tv {
namespace {

Error bad(std::string why) { return Error{ErrorKind::kFailed, "pickle: " + std::move(why)}; }

class Parser {
 public:
  Parser(std::string_view data, const PickleLimits& limits) : in_(data), limits_(limits) {}

  Result<PickleValue> run(bool allow_trailing) {
    while (pos_ < in_.size()) {
      const std::size_t at = pos_;
      const auto op = static_cast<unsigned char>(in_[pos_++]);
      if (op == '.') return finish(allow_trailing);
      if (!step(op)) {
        if (error_.empty()) error_ = "truncated";
        return bad(error_ + " at offset " + std::to_string(at));
      }
    }
    return bad("no STOP opcode (cut off?) after " + std::to_string(in_.size()) + " bytes");
  }

 private:
  Result<PickleValue> finish(bool allow_trailing) {
    if (stack_.size() != 1 || !marks_.empty()) return bad("malformed stack at STOP");
    if (!allow_trailing && pos_ != in_.size())
      return bad(std::to_string(in_.size() - pos_) + " bytes after STOP");
    out_.root = stack_.back();
    return std::move(out_);
  }

  bool fail(const char* why) {
    error_ = why;
    return false;
  }
  bool take(std::size_t n, std::string_view& out) {
    if (in_.size() - pos_ < n) return fail("truncated");
    out = in_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool uint_le(std::size_t n, std::uint64_t& v) {
    std::string_view b;
    if (!take(n, b)) return false;
    v = little_endian(b, 0, n);
    return true;
  }
  bool line(std::string_view& out) {
    const auto nl = in_.find('\n', pos_);
    if (nl == std::string_view::npos) return fail("unterminated line");
    out = in_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return true;
  }

  bool push_node(PyNode n) {
    if (out_.nodes.size() >= limits_.max_nodes) return fail("too many values");
    out_.nodes.push_back(std::move(n));
    stack_.push_back(static_cast<std::uint32_t>(out_.nodes.size() - 1));
    return true;
  }
  bool push_kind(PyKind k) {
    PyNode n;
    n.kind = k;
    return push_node(std::move(n));
  }
  bool push_int(std::int64_t v, bool big = false) {
    PyNode n;
    n.kind = PyKind::kInt;
    n.integer = v;
    n.big = big;
    return push_node(std::move(n));
  }
  bool push_text(PyKind k, std::string_view s) {
    PyNode n;
    n.kind = k;
    n.text.assign(s);
    return push_node(std::move(n));
  }
  bool sized_text(PyKind k, std::size_t width) {
    std::uint64_t len = 0;
    std::string_view s;
    if (!uint_le(width, len)) return false;
    if (len > in_.size() - pos_) return fail("length beyond the end");
    return take(static_cast<std::size_t>(len), s) && push_text(k, s);
  }
  bool pop(std::uint32_t& v) {
    if (stack_.size() <= floor()) return fail("stack underflow");
    v = stack_.back();
    stack_.pop_back();
    return true;
  }
  std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  bool top(std::uint32_t& v) {
    if (stack_.size() <= floor()) return fail("stack underflow");
    v = stack_.back();
    return true;
  }
  // Pops everything above the last mark, and the mark.
  bool pop_mark(std::vector<std::uint32_t>& items) {
    if (marks_.empty()) return fail("no MARK");
    const std::size_t m = marks_.back();
    marks_.pop_back();
    items.assign(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return true;
  }
  bool tuple_of(std::vector<std::uint32_t> items) {
    PyNode n;
    n.kind = PyKind::kTuple;
    n.items = std::move(items);
    return push_node(std::move(n));
  }
  bool tuple_n(std::size_t count) {
    if (stack_.size() - floor() < count) return fail("stack underflow");
    std::vector<std::uint32_t> items(stack_.end() - static_cast<std::ptrdiff_t>(count),
                                     stack_.end());
    stack_.resize(stack_.size() - count);
    return tuple_of(std::move(items));
  }
  bool long_n(std::size_t width) {
    std::uint64_t len = 0;
    std::string_view b;
    if (!uint_le(width, len)) return false;
    if (len > in_.size() - pos_) return fail("length beyond the end");
    if (!take(static_cast<std::size_t>(len), b)) return false;
    if (b.empty()) return push_int(0);
    if (b.size() > 8) return push_int(0, true);
    std::uint64_t v = little_endian(b, 0, b.size());
    if (b.size() < 8 && (static_cast<unsigned char>(b.back()) & 0x80))
      v |= ~std::uint64_t{0} << (8 * b.size());  // sign-extend
    return push_int(static_cast<std::int64_t>(v));
  }
  bool global(std::string_view module, std::string_view name) {
    std::string s;
    s.reserve(module.size() + 1 + name.size());
    s.append(module).append("\n").append(name);
    return push_text(PyKind::kGlobal, s);
  }
  bool object(std::uint32_t callable, std::uint32_t args) {
    PyNode n;
    n.kind = PyKind::kObject;
    n.callable = callable;
    n.args = args;
    return push_node(std::move(n));
  }
  bool memo_put(std::uint64_t key) {
    std::uint32_t v = 0;
    if (!top(v)) return false;
    if (memo_.size() >= limits_.max_nodes) return fail("memo too large");
    memo_[key] = v;
    return true;
  }
  bool memo_get(std::uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) return fail("memo key not defined");
    stack_.push_back(it->second);
    return true;
  }
  bool appends(std::vector<std::uint32_t> items) {
    std::uint32_t target = 0;
    if (!top(target)) return false;
    PyNode& t = out_.nodes[target];
    if (t.kind != PyKind::kList && t.kind != PyKind::kObject && t.kind != PyKind::kSet)
      return fail("append to a value that is not a list");
    t.items.insert(t.items.end(), items.begin(), items.end());
    return true;
  }
  bool setitems(std::vector<std::uint32_t> items) {
    if (items.size() % 2) return fail("odd number of dict items");
    std::uint32_t target = 0;
    if (!top(target)) return false;
    PyNode& t = out_.nodes[target];
    if (t.kind != PyKind::kDict && t.kind != PyKind::kObject)
      return fail("set item on a value that is not a dict");
    t.items.insert(t.items.end(), items.begin(), items.end());
    return true;
  }
  bool build() {
    std::uint32_t state = 0, target = 0;
    if (!pop(state) || !top(target)) return false;
    PyNode& t = out_.nodes[target];
    if (t.kind != PyKind::kObject) return fail("BUILD on a value that is not an object");
    t.state = state;
    return true;
  }
  bool reduce() {
    std::uint32_t args = 0, callable = 0;
    if (!pop(args) || !pop(callable)) return false;
    return object(callable, args);
  }

  bool pop_mark_only() {
    if (marks_.empty()) return fail("stack underflow");
    marks_.pop_back();
    return true;
  }
  static std::string hex(unsigned char op) {
    static constexpr char kDigits[] = "0123456789abcdef";
    return {kDigits[op >> 4], kDigits[op & 15]};
  }

  bool step(unsigned char op);
  bool step_containers(unsigned char op, bool& known);
  bool step_memo(unsigned char op, bool& known);

  std::string_view in_;
  PickleLimits limits_;
  std::size_t pos_ = 0;
  std::vector<std::uint32_t> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, std::uint32_t> memo_;
  PickleValue out_;
  std::string error_;
};

bool Parser::step_memo(unsigned char op, bool& known) {
  std::uint64_t v = 0;
  known = true;
  switch (op) {
    case 'q':  // BINPUT
      return uint_le(1, v) && memo_put(v);
    case 'r':  // LONG_BINPUT
      return uint_le(4, v) && memo_put(v);
    case 0x94:  // MEMOIZE
      return memo_put(memo_.size());
    case 'h':  // BINGET
      return uint_le(1, v) && memo_get(v);
    case 'j':  // LONG_BINGET
      return uint_le(4, v) && memo_get(v);
    default:
      known = false;
      return false;
  }
}

bool Parser::step_containers(unsigned char op, bool& known) {
  std::vector<std::uint32_t> items;
  std::uint32_t a = 0, b = 0, c = 0;
  known = true;
  switch (op) {
    case '(':  // MARK
      if (marks_.size() >= limits_.max_marks) return fail("too many MARKs");
      marks_.push_back(stack_.size());
      return true;
    case ')':
      return tuple_of({});
    case ']':
      return push_kind(PyKind::kList);
    case '}':
      return push_kind(PyKind::kDict);
    case 0x8f:  // EMPTY_SET
      return push_kind(PyKind::kSet);
    case 't':  // TUPLE
      return pop_mark(items) && tuple_of(std::move(items));
    case 0x85:
    case 0x86:
    case 0x87:
      return tuple_n(op - 0x84u);
    case 'l':  // LIST
      if (!pop_mark(items) || !push_kind(PyKind::kList)) return false;
      out_.nodes.back().items = std::move(items);
      return true;
    case 'd':  // DICT
      if (!pop_mark(items) || items.size() % 2) return fail("malformed DICT");
      if (!push_kind(PyKind::kDict)) return false;
      out_.nodes.back().items = std::move(items);
      return true;
    case 0x91:  // FROZENSET
      if (!pop_mark(items) || !push_kind(PyKind::kSet)) return false;
      out_.nodes.back().items = std::move(items);
      return true;
    case 'a':  // APPEND
      return pop(a) && appends({a});
    case 'e':   // APPENDS
    case 0x90:  // ADDITEMS
      return pop_mark(items) && appends(std::move(items));
    case 's':  // SETITEM
      return pop(b) && pop(a) && setitems({a, b});
    case 'u':  // SETITEMS
      return pop_mark(items) && setitems(std::move(items));
    case 'R':  // REDUCE
      return reduce();
    case 0x81:  // NEWOBJ
      return pop(b) && pop(a) && object(a, b);
    case 0x92:  // NEWOBJ_EX (kwargs dropped)
      return pop(c) && pop(b) && pop(a) && object(a, b);
    case 'b':  // BUILD
      return build();
    default:
      known = false;
      return false;
  }
}

bool Parser::step(unsigned char op) {
  std::uint64_t v = 0;
  std::string_view s, t;
  std::uint32_t a = 0;
  bool known = false;
  if (bool r = step_containers(op, known); known) return r;
  if (bool r = step_memo(op, known); known) return r;
  switch (op) {
    case 0x80:  // PROTO
      return uint_le(1, v) && (v <= 5 || fail("unsupported protocol"));
    case 0x95:  // FRAME: a length hint only
      return uint_le(8, v);
    case 'N':
      return push_kind(PyKind::kNone);
    case 0x88:
    case 0x89:
      if (!push_kind(PyKind::kBool)) return false;
      out_.nodes.back().integer = op == 0x88;
      return true;
    case 'J':  // BININT
      return uint_le(4, v) && push_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
    case 'K':
      return uint_le(1, v) && push_int(static_cast<std::int64_t>(v));
    case 'M':
      return uint_le(2, v) && push_int(static_cast<std::int64_t>(v));
    case 0x8a:  // LONG1
      return long_n(1);
    case 0x8b:  // LONG4
      return long_n(4);
    case 'G':  // BINFLOAT, big-endian
      if (!uint_le(8, v)) return false;
      if (!push_kind(PyKind::kFloat)) return false;
      out_.nodes.back().real = std::bit_cast<double>(__builtin_bswap64(v));
      return true;
    case 'X':
      return sized_text(PyKind::kStr, 4);
    case 0x8c:
      return sized_text(PyKind::kStr, 1);
    case 0x8d:
      return sized_text(PyKind::kStr, 8);
    case 'T':
      return sized_text(PyKind::kStr, 4);
    case 'U':
      return sized_text(PyKind::kStr, 1);
    case 'B':
      return sized_text(PyKind::kBytes, 4);
    case 'C':
      return sized_text(PyKind::kBytes, 1);
    case 0x8e:
    case 0x96:  // BINBYTES8, BYTEARRAY8
      return sized_text(PyKind::kBytes, 8);
    case 'c':  // GLOBAL
      return line(s) && line(t) && global(s, t);
    case 0x93: {  // STACK_GLOBAL
      std::uint32_t name = 0, module = 0;
      if (!pop(name) || !pop(module)) return false;
      if (!out_.is_str(module) || !out_.is_str(name)) return fail("STACK_GLOBAL needs strings");
      return global(out_.nodes[module].text, out_.nodes[name].text);
    }
    case 'Q':  // BINPERSID
      if (!pop(a)) return false;
      if (!push_kind(PyKind::kPersistent)) return false;
      out_.nodes.back().args = a;
      return true;
    case '0':  // POP
      if (stack_.size() > floor()) return pop(a);
      return pop_mark_only();
    case '1': {  // POP_MARK
      std::vector<std::uint32_t> dropped;
      return pop_mark(dropped);
    }
    case '2':  // DUP
      return top(a) && (stack_.push_back(a), true);
    default:
      error_ = "unsupported opcode 0x" + hex(op);
      return false;
  }
}

}  // namespace

Result<PickleValue> parse_pickle(std::string_view data, const PickleLimits& limits,
                                 bool allow_trailing) {
  return Parser(data, limits).run(allow_trailing);
}

std::uint32_t PickleValue::field(std::uint32_t node, std::string_view key) const {
  // A dict's items; an object's set items, then its state (a dict, or (dict|None, slots)).
  std::uint32_t sources[3] = {node, kNoNode, kNoNode};
  if (valid(node) && nodes[node].kind == PyKind::kObject) {
    const std::uint32_t st = nodes[node].state;
    sources[1] = st;
    if (valid(st) && nodes[st].kind == PyKind::kTuple && nodes[st].items.size() == 2) {
      sources[1] = nodes[st].items[0];
      sources[2] = nodes[st].items[1];
    }
  }
  for (std::uint32_t src : sources) {
    if (!valid(src)) continue;
    const PyNode& d = nodes[src];
    if (d.kind != PyKind::kDict && d.kind != PyKind::kObject) continue;
    for (std::size_t i = 0; i + 1 < d.items.size(); i += 2)
      if (is_str(d.items[i]) && nodes[d.items[i]].text == key) return d.items[i + 1];
  }
  return kNoNode;
}

std::string PickleValue::class_name(std::uint32_t node) const {
  if (!valid(node)) return "";
  if (nodes[node].kind == PyKind::kObject) node = nodes[node].callable;
  if (!valid(node) || nodes[node].kind != PyKind::kGlobal) return "";
  std::string s = nodes[node].text;
  const auto nl = s.find('\n');
  if (nl != std::string::npos) s[nl] = '.';
  return s;
}

}  // namespace tv
