#include "launcher/rendezvous/rdzv_protocol.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <stdexcept>

#include "common/escape.h"
#include "common/exit_codes.h"
#include "common/json_field.h"
#include "common/json_parse.h"

namespace tv::rdzv {
namespace {

using nlohmann::json;

Error bad(std::string what) { return Error{ErrorKind::kLost, std::move(what)}; }

void put32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

uint32_t get32(std::span<const uint8_t> b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) |
         uint32_t{b[at + 3]};
}

std::string header_bytes(const Message& m, uint32_t payload_len) {
  std::string h;
  put32(h, kMagic);
  h.push_back(static_cast<char>(kVersion));
  h.push_back(static_cast<char>(m.type));
  h.append(2, '\0');
  put32(h, static_cast<uint32_t>(m.node_rank));
  put32(h, static_cast<uint32_t>(m.generation));
  put32(h, m.seq);
  put32(h, payload_len);
  return h;
}

struct MacDeleter {
  void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
  void operator()(EVP_MAC_CTX* c) const { EVP_MAC_CTX_free(c); }
};

// HMAC-SHA256(key, dir || ctx || header || payload).
std::array<uint8_t, kMacSize> tag(const std::string& key, Direction dir, const Context& ctx,
                                  std::span<const uint8_t> header,
                                  std::span<const uint8_t> payload) {
  static const std::unique_ptr<EVP_MAC, MacDeleter> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  std::unique_ptr<EVP_MAC_CTX, MacDeleter> c(mac ? EVP_MAC_CTX_new(mac.get()) : nullptr);
  if (!c) throw std::runtime_error("OpenSSL: HMAC is not available");
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  // An empty key is legal for HMAC, but OpenSSL wants a non-null pointer.
  static const unsigned char kEmpty = 0;
  const auto* k = key.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(key.data());
  const uint8_t d = static_cast<uint8_t>(dir);
  std::array<uint8_t, kMacSize> out{};
  size_t len = 0;
  if (EVP_MAC_init(c.get(), k, key.size(), params) != 1 || EVP_MAC_update(c.get(), &d, 1) != 1 ||
      EVP_MAC_update(c.get(), ctx.data(), ctx.size()) != 1 ||
      EVP_MAC_update(c.get(), header.data(), header.size()) != 1 ||
      EVP_MAC_update(c.get(), payload.data(), payload.size()) != 1 ||
      EVP_MAC_final(c.get(), out.data(), &len, out.size()) != 1 || len != kMacSize)
    throw std::runtime_error("OpenSSL: HMAC-SHA256 failed");
  return out;
}

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

bool is_int_in(const json& body, const char* field, long lo, long hi) {
  auto it = body.find(field);
  if (it == body.end() || !it->is_number_integer()) return false;
  long v = it->get<long>();
  return v >= lo && v <= hi;
}

bool is_text(const json& body, const char* field, size_t max) {
  auto it = body.find(field);
  return it != body.end() && it->is_string() && it->get_ref<const std::string&>().size() <= max;
}

bool is_nonce(const json& body) {
  return is_text(body, "nonce", 2 * kNonceSize) &&
         nonce_from_hex(body["nonce"].get<std::string>()).has_value();
}

// A failure's signature (optional): {"type", "message", "step"?, "cuda_oom"}.
bool is_signature(const json& body) {
  auto it = body.find("signature");
  if (it == body.end()) return true;
  const json& s = *it;
  return s.is_object() && is_text(s, "type", kMaxText) && is_text(s, "message", kMaxText) &&
         (!s.contains("step") ||
          is_int_in(s, "step", 0, std::numeric_limits<std::int64_t>::max())) &&
         s.contains("cuda_oom") && s["cuda_oom"].is_boolean();
}

// A give-up's decision and the last root causes (optional): {"verdict", "recent": [text]}.
bool is_decision(const json& body) {
  if (body.contains("verdict") && !is_text(body, "verdict", kMaxText)) return false;
  if (body.contains("verdict_rule") && !is_text(body, "verdict_rule", 64)) return false;
  auto it = body.find("recent");
  if (it == body.end()) return true;
  if (!it->is_array() || it->size() > 3) return false;
  return std::all_of(it->begin(), it->end(), [](const json& t) {
    return t.is_string() && t.get_ref<const std::string&>().size() <= kMaxText;
  });
}

// The resume fallback's facts (optional): {"resumed_from", "fallbacks": [text]}.
bool is_fallback(const json& body) {
  if (body.contains("resumed_from") && !is_text(body, "resumed_from", kMaxText)) return false;
  auto it = body.find("fallbacks");
  if (it == body.end()) return true;
  if (!it->is_array() || it->size() > 8) return false;
  return std::all_of(it->begin(), it->end(), [](const json& t) {
    return t.is_string() && t.get_ref<const std::string&>().size() <= kMaxText;
  });
}

// A failure's exit code is never 0: a peer must not turn a failed job into a success.
bool is_failure(const json& body) {
  return is_int_in(body, "exit_code", 1, 255) && is_text(body, "summary", kMaxText) &&
         (!body.contains("rank") || is_int_in(body, "rank", 0, 1 << 20)) && is_signature(body) &&
         is_decision(body) && is_fallback(body);
}

bool is_unique_id(const json& body) {
  if (!is_text(body, "unique_id", kUniqueIdHex)) return false;
  const auto& id = body["unique_id"].get_ref<const std::string&>();
  return (id.empty() || id.size() == kUniqueIdHex) &&
         id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The fields each type needs; extra fields are ignored (additions within a version).
bool body_valid(MsgType type, const json& body) {
  switch (type) {
    case MsgType::kHello:
      return is_nonce(body);
    case MsgType::kWelcome:
      return is_int_in(body, "node_rank", 0, 1 << 20);
    case MsgType::kJoin:  // node_id: the node's join identity, one per trainvisor process
      return is_nonce(body) && is_int_in(body, "nnodes", 1, 1 << 20) &&
             nonce_from_hex(json_field(body, "node_id", std::string())).has_value() &&
             (!body.contains("host") || is_text(body, "host", 255)) &&
             (!body.contains("pid") || is_int_in(body, "pid", 1, 1L << 31)) &&
             (!body.contains("rank_from") || is_text(body, "rank_from", 256)) &&
             (!body.contains("fingerprint") || body["fingerprint"].is_object());
    case MsgType::kStart:
      return is_int_in(body, "master_port", 1, 65535) &&
             (!body.contains("retried_by") || is_text(body, "retried_by", 64)) &&
             (!body.contains("step_over") || is_text(body, "step_over", kMaxText)) &&
             (!body.contains("node_rank") || is_int_in(body, "node_rank", 0, 1 << 20)) &&
             (!body.contains("nnodes") || is_int_in(body, "nnodes", 1, 1 << 20));
    case MsgType::kStop:
    case MsgType::kGiveUp:
      return is_failure(body) && is_int_in(body, "failed_node", 0, 1 << 20);
    case MsgType::kFailure:
      return is_failure(body);
    case MsgType::kStopped:
      return !body.contains("step") || is_int_in(body, "step", 0, kMaxStep);
    case MsgType::kPreflight:
      return is_unique_id(body);
    case MsgType::kProbeResult:
      return body.contains("passed") && body["passed"].is_boolean() &&
             is_text(body, "summary", kMaxText);
    case MsgType::kLost:
    case MsgType::kLeave:  // "signal" (optional): the termination signal the node left on
      return is_text(body, "why", kMaxText) &&
             (!body.contains("signal") || is_int_in(body, "signal", 1, 64));
    default:
      return true;
  }
}

}  // namespace

bool known_type(uint8_t t) { return (t >= 1 && t <= 8) || (t >= 16 && t <= 21) || t == 32; }

bool sent_to(MsgType type, Direction dir) {
  const auto t = static_cast<uint8_t>(type);
  if (type == MsgType::kHeartbeat) return true;
  return dir == Direction::kToAgent ? t < 16 : (t >= 16 && t < 32);
}

const char* type_name(MsgType type) {
  switch (type) {
    case MsgType::kHello:
      return "hello";
    case MsgType::kWelcome:
      return "welcome";
    case MsgType::kStart:
      return "start";
    case MsgType::kStop:
      return "stop";
    case MsgType::kDone:
      return "done";
    case MsgType::kGiveUp:
      return "give-up";
    case MsgType::kLost:
      return "lost";
    case MsgType::kPreflight:
      return "preflight";
    case MsgType::kProbeResult:
      return "probe-result";
    case MsgType::kJoin:
      return "join";
    case MsgType::kSuccess:
      return "success";
    case MsgType::kFailure:
      return "failure";
    case MsgType::kStopped:
      return "stopped";
    case MsgType::kLeave:
      return "leave";
    case MsgType::kHeartbeat:
      return "heartbeat";
  }
  return "unknown";
}

std::string encode(const Message& m, const std::string& key, Direction dir, const Context& ctx) {
  // Summaries quote worker output, which need not be UTF-8: replace what JSON cannot carry.
  return encode_payload(m, m.body.dump(-1, ' ', false, json::error_handler_t::replace), key, dir,
                        ctx);
}

std::string encode_payload(const Message& m, const std::string& payload, const std::string& key,
                           Direction dir, const Context& ctx) {
  if (payload.size() > kMaxPayload) throw std::length_error("rdzv payload over kMaxPayload");
  std::string frame = header_bytes(m, static_cast<uint32_t>(payload.size()));
  const auto mac = tag(key, dir, ctx, bytes_of(frame), bytes_of(payload));
  frame += payload;
  frame.append(reinterpret_cast<const char*>(mac.data()), mac.size());
  return frame;
}

Result<Header> decode_header(std::span<const uint8_t> b) {
  if (b.size() < kHeaderSize) return bad("frame shorter than its 24-byte header");
  if (get32(b, 0) != kMagic) return bad("bad magic (not a trainvisor rendezvous frame)");
  if (b[4] != kVersion)
    return bad("protocol version " + std::to_string(b[4]) + ", expected " +
               std::to_string(kVersion));
  if (!known_type(b[5])) return bad("unknown message type " + std::to_string(b[5]));
  if (b[6] != 0 || b[7] != 0) return bad("non-zero flags");
  Header h;
  h.type = static_cast<MsgType>(b[5]);
  h.node_rank = static_cast<int32_t>(get32(b, 8));
  h.generation = static_cast<int32_t>(get32(b, 12));
  h.seq = get32(b, 16);
  h.payload_len = get32(b, 20);
  const bool asks_rank = h.type == MsgType::kJoin && h.node_rank == kRankUnassigned;
  if ((h.node_rank < 0 && !asks_rank) || h.generation < 0)
    return bad("negative node rank or generation");
  if (h.payload_len > kMaxPayload)
    return bad("payload of " + std::to_string(h.payload_len) + " bytes, limit " +
               std::to_string(kMaxPayload));
  return h;
}

Result<Message> decode_body(std::span<const uint8_t> header_bytes, const Header& h,
                            std::span<const uint8_t> rest, const std::string& key, Direction dir,
                            const Context& ctx) {
  if (header_bytes.size() != kHeaderSize || rest.size() != h.payload_len + kMacSize)
    return bad("frame length does not match its header");
  const auto payload = rest.first(h.payload_len);
  const auto expected = tag(key, dir, ctx, header_bytes, payload);
  if (CRYPTO_memcmp(expected.data(), rest.data() + h.payload_len, kMacSize) != 0)
    return bad("authentication failed (wrong --rdzv-token, or a replayed or altered frame)");
  if (!sent_to(h.type, dir)) return bad(std::string(type_name(h.type)) + " sent the wrong way");
  Message m{h.type, h.node_rank, h.generation, h.seq,
            parse_json_or_discarded(
                std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size()))};
  if (!m.body.is_object() || !body_valid(h.type, m.body))
    return bad(std::string("malformed ") + type_name(h.type) + " payload");
  return m;
}

Decoded decode(std::span<const uint8_t> buffer, const std::string& key, Direction dir,
               const Context& ctx) {
  Decoded d;
  if (buffer.size() < kHeaderSize) return d;
  auto h = decode_header(buffer.first(kHeaderSize));
  if (!h) return {Decoded::kBad, {}, 0, h.error().message};
  const size_t total = kHeaderSize + h->payload_len + kMacSize;
  if (buffer.size() < total) return d;
  auto m = decode_body(buffer.first(kHeaderSize), *h,
                       buffer.subspan(kHeaderSize, total - kHeaderSize), key, dir, ctx);
  if (!m) return {Decoded::kBad, {}, 0, m.error().message};
  return {Decoded::kOk, std::move(m.value()), total, {}};
}

json ranks_json(const std::vector<RankEvidence>& ranks) {
  json out = json::array();
  std::size_t bytes = 0;  // as sent: a frame of control characters grows sixfold when escaped
  for (std::size_t i = 0; i < ranks.size() && i < kMaxRanks; ++i) {
    json r = {{"rank", ranks[i].rank},
              {"node", ranks[i].node_rank},
              {"frame", ranks[i].frame.substr(0, kMaxFrame)},
              {"silent", ranks[i].silent}};
    if (const auto& c = ranks[i].collective; c.seq >= 0)
      r["collective"] = {{"seq", c.seq},
                         {"op", c.op.substr(0, kMaxCollectiveText)},
                         {"group", c.group.substr(0, kMaxCollectiveText)},
                         {"state", c.state.substr(0, kMaxCollectiveText)}};
    bytes += r.dump().size() + 1;
    if (bytes > kMaxRanksBytes) break;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {
// A peer's last collective: taken whole or not at all.
LastCollective collective_from(const json& r) {
  auto it = r.find("collective");
  if (it == r.end() || !it->is_object() || !is_int_in(*it, "seq", 0, 1L << 53)) return {};
  for (const char* k : {"op", "group", "state"})
    if (!is_text(*it, k, kMaxCollectiveText)) return {};
  return {(*it)["seq"].get<std::int64_t>(), peer_text(*it, "op"), peer_text(*it, "group"),
          peer_text(*it, "state")};
}
}  // namespace

std::vector<RankEvidence> ranks_from(const json& body, int node_rank, bool node_from_body) {
  std::vector<RankEvidence> out;
  auto it = body.find("ranks");
  if (it == body.end() || !it->is_array()) return out;
  for (const auto& r : *it) {
    if (out.size() == kMaxRanks) break;
    if (!r.is_object() || !is_int_in(r, "rank", 0, 1 << 20) || !is_text(r, "frame", kMaxFrame))
      continue;
    const int node =
        node_from_body && is_int_in(r, "node", 0, 1 << 20) ? r["node"].get<int>() : node_rank;
    out.push_back({r["rank"].get<int>(), node, peer_text(r, "frame"),
                   json_field(r, "silent", false), collective_from(r)});
  }
  return out;
}

namespace {
// A failure's texts escaped (a control character is six bytes as JSON) can pass kMaxPayload,
// which encode() refuses by throwing: what matters least gives way first, the evidence, then the
// oldest lines, then the texts are shortened.
void fit_in_one_frame(json& body) {
  const auto fits = [&body] { return body.dump().size() <= kMaxPayload - 1024; };
  if (!fits()) body.erase("ranks");
  for (const char* list : {"fallbacks", "recent"})
    while (!fits() && body.contains(list) && !body[list].empty()) body[list].erase(0);
  for (const char* text : {"resumed_from", "verdict", "culprit", "summary"})
    if (!fits() && body.contains(text))
      body[text] = body[text].get<std::string>().substr(0, kMaxText / 8);
  for (const char* text : {"type", "message"})
    if (!fits()) body["signature"][text] = body["signature"][text].get<std::string>().substr(0, 64);
}
}  // namespace

json failure_body(const NodeFailure& f) {
  std::string summary = f.summary.substr(0, kMaxText);
  const int code = (f.exit_code >= 1 && f.exit_code <= 255) ? f.exit_code : 1;
  json sig = {{"type", f.signature.type.substr(0, kMaxText)},
              {"message", f.signature.message.substr(0, kMaxText)},
              {"cuda_oom", f.signature.cuda_oom}};
  if (f.signature.step && *f.signature.step >= 0) sig["step"] = *f.signature.step;
  json body = {{"exit_code", code},
               {"summary", summary},
               {"failed_node", f.node_rank},
               {"failed_at_ns", std::max<std::int64_t>(f.failed_at_ns, 0)},
               {"signature", sig}};
  if (f.rank >= 0) body["rank"] = f.rank;
  if (!f.verdict.empty()) body["verdict"] = f.verdict.substr(0, kMaxText);
  if (!f.verdict_rule.empty()) body["verdict_rule"] = f.verdict_rule.substr(0, 64);
  if (!f.resumed_from.empty()) body["resumed_from"] = f.resumed_from.substr(0, kMaxText);
  if (!f.ranks.empty()) body["ranks"] = ranks_json(f.ranks);
  if (!f.culprit.empty()) body["culprit"] = f.culprit.substr(0, kMaxText);
  if (!f.fallbacks.empty()) {
    json lines = json::array();
    for (std::size_t i = 0; i < f.fallbacks.size() && i < 8; ++i)
      lines.push_back(f.fallbacks[i].substr(0, kMaxText));
    body["fallbacks"] = lines;
  }
  if (!f.recent.empty()) {
    json recent = json::array();
    for (std::size_t i = f.recent.size() > 3 ? f.recent.size() - 3 : 0; i < f.recent.size(); ++i)
      recent.push_back(f.recent[i].substr(0, kMaxText));
    body["recent"] = recent;
  }
  fit_in_one_frame(body);
  return body;
}

std::optional<std::int64_t> stopped_step(const json& body) {
  if (!is_int_in(body, "step", 0, kMaxStep)) return std::nullopt;
  return body["step"].get<std::int64_t>();
}

namespace {
FailureSignature signature_from(const json& body) {
  FailureSignature s;
  auto it = body.find("signature");
  if (it == body.end() || !it->is_object()) return s;
  s.type = peer_text(*it, "type");
  s.message = peer_text(*it, "message");
  if (it->contains("step")) s.step = json_field(*it, "step", std::int64_t{0});
  s.cuda_oom = json_field(*it, "cuda_oom", false);
  return s;
}
}  // namespace

NodeFailure failure_from(const Message& m) {
  NodeFailure f;
  f.generation = m.generation;
  f.node_rank = json_field(m.body, "failed_node", m.node_rank);
  f.exit_code = json_field(m.body, "exit_code", 1);
  f.summary = peer_text(m.body, "summary");
  f.rank = json_field(m.body, "rank", -1);
  f.failed_at_ns = std::max<std::int64_t>(json_field(m.body, "failed_at_ns", std::int64_t{0}), 0);
  f.signature = signature_from(m.body);
  f.verdict = peer_text(m.body, "verdict");
  f.verdict_rule = peer_text(m.body, "verdict_rule");
  f.resumed_from = peer_text(m.body, "resumed_from");
  // A stop or a give-up from the coordinator may relay every node's ranks (JobStateMachine).
  f.ranks = ranks_from(m.body, f.node_rank, m.type != MsgType::kFailure);
  f.culprit = peer_text(m.body, "culprit");
  if (auto it = m.body.find("fallbacks"); it != m.body.end() && it->is_array())
    for (const auto& t : *it)
      if (t.is_string()) f.fallbacks.push_back(untrusted_text(t.get_ref<const std::string&>()));
  if (auto it = m.body.find("recent"); it != m.body.end() && it->is_array())
    for (const auto& t : *it)
      if (t.is_string()) f.recent.push_back(untrusted_text(t.get_ref<const std::string&>()));
  return f;
}

std::string untrusted_text(std::string_view text) {
  return escape_control(text.substr(0, kMaxText)).substr(0, kMaxText);
}

std::string peer_text(const json& body, const char* field) {
  auto it = body.find(field);
  if (it == body.end() || !it->is_string()) return "";
  return untrusted_text(it->get_ref<const std::string&>());
}

Nonce random_nonce() {
  Nonce n{};
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1)
    throw std::runtime_error("OpenSSL: RAND_bytes failed");
  return n;
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

std::optional<Nonce> nonce_from_hex(const std::string& hex) {
  if (hex.size() != 2 * kNonceSize) return std::nullopt;
  Nonce n{};
  for (size_t i = 0; i < kNonceSize; ++i) {
    int v = 0;
    for (char c : hex.substr(2 * i, 2)) {
      int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + d;
    }
    n[i] = static_cast<uint8_t>(v);
  }
  return n;
}

NodeIdentity this_process_identity(std::string rank_from) {
  char host[256] = {};
  NodeIdentity who;
  who.node_id = to_hex(random_nonce());
  who.host = ::gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  who.pid = static_cast<int>(::getpid());
  who.rank_from = std::move(rank_from);
  return who;
}

json join_body(const Nonce& nonce, int nnodes, int nproc_per_node, const NodeIdentity& who,
               const json& fingerprint) {
  json body = {{"nonce", to_hex(nonce)},           {"nnodes", nnodes},
               {"nproc_per_node", nproc_per_node}, {"node_id", who.node_id},
               {"host", who.host.substr(0, 255)},  {"rank_from", who.rank_from.substr(0, 256)}};
  if (who.pid > 0) body["pid"] = who.pid;
  if (fingerprint.is_object()) body["fingerprint"] = fingerprint;
  return body;
}

NodeIdentity identity_from(const Message& join) {
  return {json_field(join.body, "node_id", std::string()), peer_text(join.body, "host"),
          json_field(join.body, "pid", 0), peer_text(join.body, "rank_from")};
}

std::string describe(const NodeIdentity& who, const std::string& address) {
  std::string s = "host " + (who.host.empty() ? std::string("?") : who.host) + " at " + address;
  if (who.pid > 0) s += ", pid " + std::to_string(who.pid);
  if (!who.rank_from.empty()) s += ", rank from " + who.rank_from;
  return s;
}

Context make_context(const Nonce& coordinator, const std::optional<Nonce>& agent) {
  Context c{};
  std::copy(coordinator.begin(), coordinator.end(), c.begin());
  if (agent) std::copy(agent->begin(), agent->end(), c.begin() + kNonceSize);
  return c;
}

}  // namespace tv::rdzv
