// libFuzzer harness for the rendezvous message decoder (launcher/rendezvous/rdzv_protocol.h).
//
// Two paths per input: (1) the raw bytes as they would arrive on a connection (the corpus holds
// frames correctly tagged under kKey, so mutations start from authentic ones); (2) the
// same bytes split into a header and a payload and correctly tagged, so the payload reaches the
// JSON parser and the per-type validation behind the MAC check. Whatever decodes must re-encode
// and decode to the same message.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "launcher/rendezvous/rdzv_protocol.h"

namespace {

using namespace tv::rdzv;

const std::string kKey = "fuzz-key";

void check_roundtrip(const Message& m, Direction dir, const Context& ctx) {
  const std::string frame = encode(m, kKey, dir, ctx);
  auto again =
      decode({reinterpret_cast<const uint8_t*>(frame.data()), frame.size()}, kKey, dir, ctx);
  if (again.status != Decoded::kOk || again.message.type != m.type || again.message.body != m.body)
    abort();
}

void raw(const uint8_t* data, size_t size) {
  for (Direction dir : {Direction::kToCoordinator, Direction::kToAgent}) {
    auto d = decode({data, size}, kKey, dir, Context{});
    if (d.status == Decoded::kOk) check_roundtrip(d.message, dir, Context{});  // tagged seeds
  }
}

void tagged(const uint8_t* data, size_t size) {
  if (size < kHeaderSize) return;
  auto header = decode_header({data, kHeaderSize});
  if (!header) return;
  // Tagged the way a peer holding the key would: the fuzzed header fields and payload bytes.
  const Direction dir =
      sent_to(header->type, Direction::kToAgent) ? Direction::kToAgent : Direction::kToCoordinator;
  const std::string payload(reinterpret_cast<const char*>(data) + kHeaderSize,
                            std::min(size - kHeaderSize, kMaxPayload));
  const Message fields{header->type, header->node_rank, header->generation, header->seq, {}};
  const std::string frame = encode_payload(fields, payload, kKey, dir, Context{});
  auto d =
      decode({reinterpret_cast<const uint8_t*>(frame.data()), frame.size()}, kKey, dir, Context{});
  if (d.status == Decoded::kNeedMore) abort();  // a whole frame was there
  if (d.status == Decoded::kOk) check_roundtrip(d.message, dir, Context{});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  raw(data, size);
  tagged(data, size);
  return 0;
}
