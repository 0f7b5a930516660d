// The node agents' wire protocol (docs/coordination.md): framing, authentication, validation.
//
// A frame is a fixed 24-byte header, a JSON payload of at most kMaxPayload bytes, and a 32-byte
// HMAC-SHA256 tag:
//
//   magic u32 "TVRD" | version u8 | type u8 | flags u16 (0) | node_rank i32 | generation i32 |
//   seq u32 | payload_len u32 | payload | mac[32]            (integers big-endian)
//
// The tag covers a direction byte, the connection's 32-byte session context, the header and the
// payload. The session context is the coordinator's fresh random nonce (sent in its Hello) followed
// by the agent's fresh random nonce (sent in its Join; zeros while the Join itself is being sent),
// so a frame recorded on one connection fails on any other; `seq` counts the frames of each
// direction from 0, so a frame replayed, dropped or reordered within a connection fails too.
//
// Decoding is pure (bytes in, message or error out) and never trusts a length before checking it
// against kMaxPayload. Tags are compared in constant time (CRYPTO_memcmp). Thread-compatible.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"
#include "launcher/job/cluster.h"

namespace tv::rdzv {

inline constexpr uint32_t kMagic = 0x54565244;  // "TVRD"
// 2: a join may ask for its node rank (kRankUnassigned), every join names its node (node_id,
// host, pid, rank_from) and a welcome names the node's rank. Another version is refused.
inline constexpr uint8_t kVersion = 2;
// The header's node_rank of a join that asks the coordinator for a rank (the only negative rank a
// frame may carry); the welcome's {"node_rank"} is the answer.
inline constexpr int kRankUnassigned = -1;
inline constexpr size_t kHeaderSize = 24;
inline constexpr size_t kMacSize = 32;
inline constexpr size_t kMaxPayload = 64 * 1024;
inline constexpr size_t kNonceSize = 16;
inline constexpr size_t kMaxText = 4096;     // summaries and reasons
inline constexpr size_t kUniqueIdHex = 256;  // an ncclUniqueId (128 bytes), hex-encoded

enum class MsgType : uint8_t {
  // coordinator -> agent
  kHello = 1,      // {"nonce": hex}: the coordinator's nonce for this connection
  kWelcome = 2,    // {"node_rank"}: the Join was accepted; the node's rank (assigned or its own)
  kStart = 3,      // {"master_port", "retried_by"?}: start generation `generation`
  kStop = 4,       // failure: stop the workers of `generation`, then report Stopped
  kDone = 5,       // {}: every node succeeded
  kGiveUp = 6,     // failure: restarts exhausted, or a failed preflight (exit 69)
  kLost = 7,       // {"why", "signal"?}: a node was lost; exit 75 (128 + signal when set)
  kPreflight = 8,  // {"unique_id": hex of 128 bytes, or "" when node 0 has none}: run the probe
  // agent -> coordinator
  kJoin = 16,  // {"nonce", "nnodes", "node_id", "nproc_per_node"?, "host"?, "pid"?, "rank_from"?,
               //  "fingerprint"? (an object: fingerprint.h; a version 2 addition)}
  kSuccess = 17,      // {}: this node's workers of `generation` exited 0
  kFailure = 18,      // {"exit_code", "summary"}
  kStopped = 19,      // {"ranks"?, "step"?}: this node's workers of `generation` are gone
  kLeave = 20,        // {"why", "signal"?}: this agent is leaving (on that signal)
  kProbeResult = 21,  // {"passed": bool, "summary"}: this node's preflight verdict
  // both ways
  kHeartbeat = 32,  // {}
};

enum class Direction : uint8_t { kToAgent = 'A', kToCoordinator = 'C' };

using Nonce = std::array<uint8_t, kNonceSize>;
using Context = std::array<uint8_t, 2 * kNonceSize>;  // coordinator nonce, agent nonce

struct Message {
  MsgType type = MsgType::kHeartbeat;
  int node_rank = 0;
  int generation = 0;
  uint32_t seq = 0;
  nlohmann::json body = nlohmann::json::object();
};

struct Header {
  MsgType type = MsgType::kHeartbeat;
  int node_rank = 0;
  int generation = 0;
  uint32_t seq = 0;
  uint32_t payload_len = 0;
};

// Who may send a type: the coordinator, an agent, or both (heartbeat).
bool known_type(uint8_t type);
bool sent_to(MsgType type, Direction dir);
const char* type_name(MsgType type);

// One frame, tagged under `key` for `dir` on the connection `ctx`.
std::string encode(const Message& m, const std::string& key, Direction dir, const Context& ctx);
// The same with the payload given as bytes (m.body ignored): for tests and the fuzzer.
std::string encode_payload(const Message& m, const std::string& payload, const std::string& key,
                           Direction dir, const Context& ctx);

// The header alone: magic, version, known type, flags 0, non-negative rank (kRankUnassigned in a
// join) and generation, payload_len <= kMaxPayload. `bytes` must hold kHeaderSize bytes.
Result<Header> decode_header(std::span<const uint8_t> bytes);
// The rest of a frame whose header decoded: `rest` = payload and tag (payload_len + kMacSize).
// Checks the tag, then that the payload is a JSON object with the fields its type needs.
Result<Message> decode_body(std::span<const uint8_t> header_bytes, const Header& header,
                            std::span<const uint8_t> rest, const std::string& key, Direction dir,
                            const Context& ctx);

// The whole decoder over a buffer: kNeedMore while the buffer holds less than one frame.
struct Decoded {
  enum Status { kOk, kNeedMore, kBad } status = kNeedMore;
  Message message;
  size_t consumed = 0;
  std::string error;
};
Decoded decode(std::span<const uint8_t> buffer, const std::string& key, Direction dir,
               const Context& ctx);

// Who a joining node is (docs/coordination.md, "Node ranks"): node_id is random, made once per
// trainvisor process, and sent in each of its joins, so the coordinator tells a node that joins
// again (its connection dropped, or it asked for a rank first) from another node claiming the
// same rank; host, pid and rank_from (where its rank came from: "--node-rank", "env
// SLURM_NODEID", ...) only name it in messages.
struct NodeIdentity {
  std::string node_id;  // hex of kNonceSize random bytes
  std::string host;
  int pid = 0;
  std::string rank_from;
};
NodeIdentity this_process_identity(std::string rank_from);
// `fingerprint` (launcher/rendezvous/fingerprint.h): this node's, or null to send none.
nlohmann::json join_body(const Nonce& nonce, int nnodes, int nproc_per_node,
                         const NodeIdentity& who,
                         const nlohmann::json& fingerprint = nlohmann::json());
NodeIdentity identity_from(const Message& join);  // texts through untrusted_text
// "host h at 127.0.0.1, pid 12, rank from --node-rank"
std::string describe(const NodeIdentity& who, const std::string& address);

// Typed payloads.
// A hang's evidence (RankEvidence), in a failure's and a Stopped's {"ranks": [{"rank", "node",
// "frame", "silent", "collective"?: {"seq", "op", "group", "state"}}]}: kMaxRanks entries of
// kMaxFrame characters at most (a collective's texts kMaxCollectiveText each, cluster.h), so a full
// frame still fits.
inline constexpr size_t kMaxRanks = 128;
inline constexpr size_t kMaxFrame = 300;
inline constexpr size_t kMaxRanksBytes = 24 * 1024;  // the array as sent, at most
nlohmann::json ranks_json(const std::vector<RankEvidence>& ranks);
// Entries that are not well-formed are left out. Each entry's node is `node_rank` (the sender's,
// never the body's: an agent speaks for its own ranks), except with `node_from_body`: the
// coordinator's give-up relays every node's ranks, each entry with its "node".
std::vector<RankEvidence> ranks_from(const nlohmann::json& body, int node_rank,
                                     bool node_from_body = false);
nlohmann::json failure_body(const NodeFailure& f);
// A Stopped's {"step"}: the last progress step its node's workers printed in the generation
// (none: no progress line there, or a frame from before the field; never negative).
inline constexpr std::int64_t kMaxStep = std::numeric_limits<std::int64_t>::max();
std::optional<std::int64_t> stopped_step(const nlohmann::json& body);
NodeFailure failure_from(const Message& m);  // for kStop / kGiveUp / kFailure (validated)
// Text a peer sent (summaries, reasons) made safe for a log line, a failure file or a termination
// message: control characters escaped (\n, \t, \xNN), at most kMaxText bytes. Every text field
// of a received message goes through this; exit codes are range-checked by decode (1-255).
std::string untrusted_text(std::string_view text);
std::string peer_text(const nlohmann::json& body, const char* field);
Nonce random_nonce();
std::string to_hex(std::span<const uint8_t> bytes);
std::optional<Nonce> nonce_from_hex(const std::string& hex);
Context make_context(const Nonce& coordinator, const std::optional<Nonce>& agent);

}  // namespace tv::rdzv
