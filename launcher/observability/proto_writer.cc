#include "launcher/observability/proto_writer.h"

#include <bit>

namespace tv {

void ProtoWriter::raw_varint(std::uint64_t v) {
  while (v >= 0x80) {
    out_ += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out_ += static_cast<char>(v);
}

void ProtoWriter::raw_fixed64(std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);  // little-endian
}

void ProtoWriter::tag(int field, int wire_type) {
  raw_varint((static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(wire_type));
}

void ProtoWriter::varint(int field, std::uint64_t v) {
  tag(field, 0);
  raw_varint(v);
}

void ProtoWriter::fixed64(int field, std::uint64_t v) {
  tag(field, 1);
  raw_fixed64(v);
}

void ProtoWriter::float64(int field, double v) {
  tag(field, 1);
  raw_fixed64(std::bit_cast<std::uint64_t>(v));
}

void ProtoWriter::bytes(int field, std::string_view v) {
  tag(field, 2);
  raw_varint(v.size());
  out_.append(v.data(), v.size());
}

}  // namespace tv
