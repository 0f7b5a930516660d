// The few protobuf wire-format pieces the OTLP push needs (protobuf.dev, "Encoding"): varints,
// fixed64 and double (I64), length-delimited strings and nested messages. A message is written
// whole into its own writer and then copied into its parent as one length-delimited field. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tv {

class ProtoWriter {
 public:
  void varint(int field, std::uint64_t v);    // int32/int64/uint32/uint64/bool/enum (wire type 0)
  void fixed64(int field, std::uint64_t v);   // fixed64/sfixed64 (wire type 1)
  void float64(int field, double v);          // double (wire type 1)
  void bytes(int field, std::string_view v);  // string/bytes (wire type 2)
  void message(int field, const ProtoWriter& m) { bytes(field, m.out_); }
  const std::string& data() const { return out_; }

 private:
  void tag(int field, int wire_type);
  void raw_varint(std::uint64_t v);
  void raw_fixed64(std::uint64_t v);
  std::string out_;
};

}  // namespace tv
