// A tiny pickle writer for unit tests: builds DCP `.metadata` the way Python's pickler does for
// torch's dataclasses (GLOBAL + NEWOBJ + BUILD with a state dict, protocol 2 opcodes), so the
// parser is tested on the structure it meets without needing PyTorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tv::testing {

class PickleWriter {
 public:
  PickleWriter() { out_ += "\x80\x02"; }
  PickleWriter& str(const std::string& s) {
    out_ += 'X';
    u32(static_cast<std::uint32_t>(s.size()));
    out_ += s;
    return *this;
  }
  PickleWriter& integer(std::int64_t v) {
    if (v >= 0 && v < 256) {
      out_ += 'K';
      out_ += static_cast<char>(v);
    } else {
      out_ += '\x8a';
      out_ += '\x08';
      for (int i = 0; i < 8; ++i)
        out_ += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
    }
    return *this;
  }
  PickleWriter& none() { return op('N'); }
  PickleWriter& mark() { return op('('); }
  PickleWriter& op(char c) {
    out_ += c;
    return *this;
  }
  // GLOBAL module name; EMPTY_TUPLE; NEWOBJ; then the caller pushes a state dict and calls build.
  PickleWriter& new_object(const std::string& module, const std::string& name) {
    out_ += 'c' + module + "\n" + name + "\n";
    return op(')').op('\x81');
  }
  PickleWriter& build() { return op('b'); }
  PickleWriter& empty_dict() { return op('}'); }
  PickleWriter& setitems() { return op('u'); }
  std::string stop() { return out_ + "."; }

 private:
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  std::string out_;
};

struct StorageRef {
  std::string file;
  std::int64_t offset;
  std::int64_t length;
};

// A Metadata whose storage_data has one entry per ref.
inline std::string make_dcp_metadata(const std::vector<StorageRef>& refs) {
  PickleWriter w;
  w.new_object("torch.distributed.checkpoint.metadata", "Metadata").empty_dict().mark();
  w.str("state_dict_metadata").empty_dict();
  w.str("planner_data").none();
  w.str("storage_data").empty_dict().mark();
  int i = 0;
  for (const auto& r : refs) {
    w.new_object("torch.distributed.checkpoint.metadata", "MetadataIndex").empty_dict().mark();
    w.str("fqn").str("w" + std::to_string(i++)).str("offset").none().str("index").none();
    w.setitems().build();
    w.new_object("torch.distributed.checkpoint.filesystem", "_StorageInfo").empty_dict().mark();
    w.str("relative_path")
        .str(r.file)
        .str("offset")
        .integer(r.offset)
        .str("length")
        .integer(r.length);
    w.setitems().build();
  }
  w.setitems();  // storage_data
  w.setitems().build();
  return w.stop();
}

}  // namespace tv::testing
