// A safe parser for the subset of Python's pickle format that checkpoint metadata uses (DCP
// `.metadata`, skrl's jax `agent_<t>.pickle`, accelerate's `random_states_<i>.pkl`). It never
// executes anything: GLOBAL/STACK_GLOBAL become a Global value (module, name), REDUCE/NEWOBJ
// become an Object (callable, args) and BUILD stores the state on it; persistent ids stay
// opaque. Binary opcodes of protocols 2-5 are supported; text-protocol opcodes, extension codes
// and out-of-band buffers are reported as unsupported. Bounded (nodes, input, marks), no
// exceptions, no recursion: a corrupt or hostile file is an error, never a crash.
// Fuzzed by tests/fuzz/fuzz_pickle.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tv {

enum class PyKind : std::uint8_t {
  kNone,
  kBool,
  kInt,  // int64; `big` when it did not fit
  kFloat,
  kStr,    // unicode or py2 str, `text`
  kBytes,  // `text` holds the bytes
  kTuple,
  kList,
  kDict,  // items: key, value, key, value ...
  kSet,
  kGlobal,  // text = "module\nname"
  kObject,  // callable, args (a tuple node or none), state; items: appended / set items
  kPersistent,
};

inline constexpr std::uint32_t kNoNode = 0xFFFFFFFF;

struct PyNode {
  PyKind kind = PyKind::kNone;
  bool big = false;
  std::int64_t integer = 0;  // kInt, kBool
  double real = 0;
  std::string text;
  std::vector<std::uint32_t> items;
  std::uint32_t callable = kNoNode, args = kNoNode, state = kNoNode;  // kObject
};

struct PickleLimits {
  std::size_t max_nodes = 4'000'000;
  std::size_t max_marks = 100'000;
};

class PickleValue {
 public:
  std::uint32_t root = kNoNode;
  std::vector<PyNode> nodes;

  const PyNode& at(std::uint32_t i) const { return nodes[i]; }
  bool valid(std::uint32_t i) const { return i < nodes.size(); }
  // A dict-like node's value for a string key: a kDict, or a kObject's items, or its state
  // (a dict, or the slot dict of a (dict-or-None, slots) tuple). kNoNode when absent.
  std::uint32_t field(std::uint32_t node, std::string_view key) const;
  // "module.name" of an object's class (or of a global), "" otherwise.
  std::string class_name(std::uint32_t node) const;
  bool is_int(std::uint32_t node) const {
    return valid(node) && nodes[node].kind == PyKind::kInt && !nodes[node].big;
  }
  bool is_str(std::uint32_t node) const { return valid(node) && nodes[node].kind == PyKind::kStr; }
};

// Parses a whole pickle: STOP must come, and only trailing bytes are allowed after it when
// `allow_trailing` (pickle streams can hold several pickles).
Result<PickleValue> parse_pickle(std::string_view data, const PickleLimits& limits = {},
                                 bool allow_trailing = false);

}  // namespace tv
