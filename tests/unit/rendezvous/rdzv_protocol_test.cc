#include "launcher/rendezvous/rdzv_protocol.h"

#include <gtest/gtest.h>

#include "launcher/rendezvous/network_cluster.h"

namespace tv::rdzv {
namespace {

const std::string kKey = "secret-token";

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

Context ctx_of(uint8_t fill) {
  Nonce a{}, b{};
  a.fill(fill);
  b.fill(static_cast<uint8_t>(fill + 1));
  return make_context(a, b);
}

Message start_message() { return {MsgType::kStart, 0, 2, 5, {{"master_port", 40123}}}; }

TEST(RdzvProtocol, RoundTripsEveryField) {
  const auto frame = encode(start_message(), kKey, Direction::kToAgent, ctx_of(1));
  auto d = decode(bytes(frame), kKey, Direction::kToAgent, ctx_of(1));
  ASSERT_EQ(d.status, Decoded::kOk) << d.error;
  EXPECT_EQ(d.consumed, frame.size());
  EXPECT_EQ(d.message.type, MsgType::kStart);
  EXPECT_EQ(d.message.generation, 2);
  EXPECT_EQ(d.message.seq, 5u);
  EXPECT_EQ(d.message.body["master_port"], 40123);
}

TEST(RdzvProtocol, FailureBodyRoundTrips) {
  NodeFailure f =
      node_failure(3, 1, 7, "rank 3 (node 1): exit 7: ValueError: boom", 1764496800123456789);
  f.signature = {"ValueError", "boom at <n>", 40, false};
  f.verdict = "job: giving up, rule same_failure: ...";
  f.verdict_rule = "same_failure";
  f.recent = {"generation 2: a", "generation 3: b"};
  f.resumed_from = "/ckpt/checkpoints/agent_30.pt";  // the resume fallback compares it
  f.fallbacks = {"generation 2 stepped over checkpoint K poisoned: ..."};
  f.ranks = {{2, 1, "all_reduce (/w/t.py:3)", false}, {3, 1, "", true}};
  f.culprit = "rank 3 on node 1 wrote no stack within 3 s; every other rank waits in x";
  f.rank = 3;  // node 0's table names it
  Message m{MsgType::kStop, 0, 3, 0, failure_body(f)};
  auto d = decode(bytes(encode(m, kKey, Direction::kToAgent, ctx_of(1))), kKey, Direction::kToAgent,
                  ctx_of(1));
  ASSERT_EQ(d.status, Decoded::kOk) << d.error;
  auto g = failure_from(d.message);
  EXPECT_EQ(g.generation, 3);
  EXPECT_EQ(g.node_rank, 1);
  EXPECT_EQ(g.exit_code, 7);
  EXPECT_EQ(g.summary, f.summary);
  EXPECT_EQ(g.failed_at_ns, f.failed_at_ns);
  EXPECT_EQ(g.signature, f.signature);  // the RootCauseJudge on node 0 compares it
  EXPECT_EQ(g.verdict, f.verdict);
  EXPECT_EQ(g.verdict_rule, f.verdict_rule);
  EXPECT_EQ(g.recent, f.recent);
  EXPECT_EQ(g.resumed_from, f.resumed_from);
  EXPECT_EQ(g.fallbacks, f.fallbacks);
  EXPECT_EQ(g.ranks, f.ranks);  // the job's culprit is decided from them
  EXPECT_EQ(g.culprit, f.culprit);
  EXPECT_EQ(g.rank, 3);
  // Before any progress: no step on the wire, none after it.
  f.signature.step.reset();
  EXPECT_FALSE(failure_from(Message{MsgType::kStop, 0, 3, 0, failure_body(f)}).signature.step);
  // From an older peer (no field) or a hostile one (negative, not a number): not known.
  using nlohmann::json;
  for (const json& at : {json(), json(-5), json("soon")}) {
    json body = failure_body(f);
    if (at.is_null())
      body.erase("failed_at_ns");
    else
      body["failed_at_ns"] = at;
    EXPECT_EQ(failure_from(Message{MsgType::kStop, 0, 3, 0, body}).failed_at_ns, 0) << at;
  }
}

// A hang's evidence from a peer: malformed entries are left out, the node is the sender's, texts
// are escaped, and however much a node has, it fits in one frame.
TEST(RdzvProtocol, ARanksLastCollectiveTravelsWholeOrNotAtAll) {
  using nlohmann::json;
  RankEvidence r{3, 1, "all_reduce (/a.py:1)", false, {812, "nccl:all_reduce", "0", "started"}};
  const auto back = ranks_from(json{{"ranks", ranks_json({r})}}, 1);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0], r);
  // Not well-formed: the rank stays, its collective is dropped.
  for (const json& bad :
       {json{{"seq", -1}, {"op", "x"}, {"group", "0"}, {"state", "s"}},
        json{{"seq", 1}, {"op", 7}, {"group", "0"}, {"state", "s"}},
        json{{"seq", 1}, {"op", std::string(65, 'x')}, {"group", "0"}, {"state", "s"}},
        json{{"seq", "1"}}, json("x")}) {
    const json body = {{"ranks", json::array({{{"rank", 2}, {"frame", ""}, {"collective", bad}}})}};
    const auto got = ranks_from(body, 0);
    ASSERT_EQ(got.size(), 1u) << bad;
    EXPECT_EQ(got[0].collective.seq, -1) << bad;
  }
  // A peer's control characters are escaped.
  const json body = {
      {"ranks",
       json::array(
           {{{"rank", 2},
             {"frame", ""},
             {"collective", {{"seq", 4}, {"op", "a\x1b[2J"}, {"group", "0"}, {"state", "s"}}}}})}};
  EXPECT_EQ(ranks_from(body, 0)[0].collective.op.find('\x1b'), std::string::npos);
}

TEST(RdzvProtocol, RankEvidenceIsBoundedAndTakenOnlyWellFormed) {
  using nlohmann::json;
  const json body = {
      {"ranks", json::array({
                    {{"rank", 4}, {"frame", "f (/a.py:1)\x1b[2J"}, {"silent", false}},
                    {{"rank", -1}, {"frame", "x"}},
                    {{"rank", 5}, {"frame", 7}},
                    "not an object",
                    {{"rank", 6}, {"frame", ""}, {"silent", true}},
                })}};
  const auto ranks = ranks_from(body, /*node_rank=*/2);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].rank, 4);
  EXPECT_EQ(ranks[0].node_rank, 2);
  EXPECT_EQ(ranks[0].frame.find('\x1b'), std::string::npos) << ranks[0].frame;
  EXPECT_TRUE(ranks[1].silent);
  EXPECT_TRUE(ranks_from(json{{"ranks", "x"}}, 0).empty());
  // 1,000 ranks of control characters (sixfold when escaped): the array stays within its bytes.
  std::vector<RankEvidence> many(1000, RankEvidence{1, 0, std::string(400, '\x01'), false});
  const json sent = ranks_json(many);
  EXPECT_LE(sent.dump().size(), kMaxRanksBytes);
  EXPECT_GT(sent.size(), 0u);
  NodeFailure f = node_failure(0, 0, 124, std::string(kMaxText, 'x'));
  f.ranks = many;
  f.recent = {std::string(kMaxText, '\x02'), std::string(kMaxText, '\x02')};
  f.fallbacks = std::vector<std::string>(8, std::string(kMaxText, 'y'));
  f.verdict = f.culprit = f.resumed_from = std::string(kMaxText, '\x03');
  f.signature.type = f.signature.message = std::string(kMaxText, '\x04');
  EXPECT_NO_THROW(encode(Message{MsgType::kGiveUp, 0, 0, 0, failure_body(f)}, kKey,
                         Direction::kToAgent, ctx_of(1)));
}

TEST(RdzvProtocol, PartialFrameNeedsMore) {
  const auto frame = encode(start_message(), kKey, Direction::kToAgent, ctx_of(1));
  for (size_t n : {size_t{0}, size_t{10}, kHeaderSize, frame.size() - 1}) {
    auto d = decode(bytes(frame.substr(0, n)), kKey, Direction::kToAgent, ctx_of(1));
    EXPECT_EQ(d.status, Decoded::kNeedMore) << n;
  }
}

TEST(RdzvProtocol, WrongKeyFailsAuthentication) {
  const auto frame = encode(start_message(), "other-job", Direction::kToAgent, ctx_of(1));
  auto d = decode(bytes(frame), kKey, Direction::kToAgent, ctx_of(1));
  EXPECT_EQ(d.status, Decoded::kBad);
  EXPECT_NE(d.error.find("authentication failed"), std::string::npos) << d.error;
}

TEST(RdzvProtocol, FrameFromAnotherConnectionFails) {  // replay across connections
  const auto frame = encode(start_message(), kKey, Direction::kToAgent, ctx_of(1));
  EXPECT_EQ(decode(bytes(frame), kKey, Direction::kToAgent, ctx_of(9)).status, Decoded::kBad);
}

TEST(RdzvProtocol, ReflectedFrameFails) {
  Message hb{MsgType::kHeartbeat, 0, 0, 0, nlohmann::json::object()};
  const auto frame = encode(hb, kKey, Direction::kToAgent, ctx_of(1));
  EXPECT_EQ(decode(bytes(frame), kKey, Direction::kToCoordinator, ctx_of(1)).status, Decoded::kBad);
}

TEST(RdzvProtocol, EveryAlteredByteFails) {
  const auto frame = encode(start_message(), kKey, Direction::kToAgent, ctx_of(1));
  for (size_t i = 0; i < frame.size(); ++i) {
    std::string bad = frame;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    auto d = decode(bytes(bad), kKey, Direction::kToAgent, ctx_of(1));
    EXPECT_NE(d.status, Decoded::kOk) << "byte " << i;
  }
}

TEST(RdzvProtocol, OversizedLengthRejectedFromHeaderAlone) {
  std::string frame =
      encode(start_message(), kKey, Direction::kToAgent, ctx_of(1)).substr(0, kHeaderSize);
  const uint32_t big = kMaxPayload + 1;
  for (int i = 0; i < 4; ++i) frame[20 + i] = static_cast<char>((big >> (24 - 8 * i)) & 0xff);
  auto d = decode(bytes(frame), kKey, Direction::kToAgent, ctx_of(1));
  EXPECT_EQ(d.status, Decoded::kBad);
  EXPECT_NE(d.error.find("limit"), std::string::npos) << d.error;
}

TEST(RdzvProtocol, OtherVersionRejected) {
  std::string frame = encode(start_message(), kKey, Direction::kToAgent, ctx_of(1));
  for (char other : {1, 3}) {  // an older peer (version 1: no rank assignment) or a newer one
    frame[4] = other;
    auto d = decode(bytes(frame), kKey, Direction::kToAgent, ctx_of(1));
    EXPECT_EQ(d.status, Decoded::kBad);
    EXPECT_NE(d.error.find("protocol version " + std::to_string(other) + ", expected 2"),
              std::string::npos)
        << d.error;
  }
}

NodeIdentity identity() { return {to_hex(random_nonce()), "ip-10-0-0-7", 1, "--node-rank"}; }

// Version 2's join names its node and may ask for a rank (kRankUnassigned in the header, the
// only negative rank a frame carries); the welcome names the rank.
TEST(RdzvProtocol, JoinWithoutRankAndWelcomeWithItRoundTrip) {
  const auto who = identity();
  Message join{MsgType::kJoin, kRankUnassigned, 0, 0, join_body(random_nonce(), 3, 2, who)};
  auto d = decode(bytes(encode(join, kKey, Direction::kToCoordinator, ctx_of(1))), kKey,
                  Direction::kToCoordinator, ctx_of(1));
  ASSERT_EQ(d.status, Decoded::kOk) << d.error;
  EXPECT_EQ(d.message.node_rank, kRankUnassigned);
  const NodeIdentity got = identity_from(d.message);
  EXPECT_EQ(got.node_id, who.node_id);
  EXPECT_EQ(got.host, "ip-10-0-0-7");
  EXPECT_EQ(got.pid, 1);
  EXPECT_EQ(got.rank_from, "--node-rank");
  EXPECT_EQ(describe(got, "10.0.0.7"),
            "host ip-10-0-0-7 at 10.0.0.7, pid 1, rank from --node-rank");
  Message welcome{MsgType::kWelcome, 0, 0, 1, {{"node_rank", 2}}};
  d = decode(bytes(encode(welcome, kKey, Direction::kToAgent, ctx_of(1))), kKey,
             Direction::kToAgent, ctx_of(1));
  ASSERT_EQ(d.status, Decoded::kOk) << d.error;
  EXPECT_EQ(d.message.body["node_rank"], 2);
}

TEST(RdzvProtocol, NegativeRankOnlyInAJoinAndJoinNeedsItsNode) {
  Message hb{MsgType::kHeartbeat, kRankUnassigned, 0, 0, nlohmann::json::object()};
  auto d = decode(bytes(encode(hb, kKey, Direction::kToCoordinator, ctx_of(1))), kKey,
                  Direction::kToCoordinator, ctx_of(1));
  EXPECT_EQ(d.status, Decoded::kBad);
  EXPECT_NE(d.error.find("negative node rank"), std::string::npos) << d.error;
  Message join{MsgType::kJoin, -2, 0, 0, join_body(random_nonce(), 3, 2, identity())};
  EXPECT_EQ(decode(bytes(encode(join, kKey, Direction::kToCoordinator, ctx_of(1))), kKey,
                   Direction::kToCoordinator, ctx_of(1))
                .status,
            Decoded::kBad);
  auto body = join_body(random_nonce(), 3, 2, identity());
  const std::vector<nlohmann::json> bad = {
      [&] {
        auto b = body;
        b.erase("node_id");
        return b;
      }(),  // a version 1 join
      [&] {
        auto b = body;
        b["node_id"] = "xyz";
        return b;
      }(),  // not 16 bytes of hex
      [&] {
        auto b = body;
        b["pid"] = -4;
        return b;
      }(),  // not a pid
      [&] {
        auto b = body;
        b["host"] = std::string(300, 'h');
        return b;
      }(),  // too long
  };
  for (const auto& b : bad) {
    Message m{MsgType::kJoin, 1, 0, 0, b};
    d = decode(bytes(encode(m, kKey, Direction::kToCoordinator, ctx_of(1))), kKey,
               Direction::kToCoordinator, ctx_of(1));
    EXPECT_EQ(d.status, Decoded::kBad) << b.dump();
  }
  Message welcome{MsgType::kWelcome, 0, 0, 1, nlohmann::json::object()};  // a version 1 welcome
  EXPECT_EQ(decode(bytes(encode(welcome, kKey, Direction::kToAgent, ctx_of(1))), kKey,
                   Direction::kToAgent, ctx_of(1))
                .status,
            Decoded::kBad);
}

TEST(RdzvProtocol, HttpRequestRejected) {
  auto d = decode(bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), kKey, Direction::kToCoordinator,
                  ctx_of(1));
  EXPECT_EQ(d.status, Decoded::kBad);
  EXPECT_NE(d.error.find("magic"), std::string::npos) << d.error;
}

TEST(RdzvProtocol, UnknownTypeAndWrongDirectionRejected) {
  std::string frame = encode(start_message(), kKey, Direction::kToAgent, ctx_of(1));
  frame[5] = 99;
  EXPECT_EQ(decode(bytes(frame), kKey, Direction::kToAgent, ctx_of(1)).status, Decoded::kBad);
  // A Start (coordinator's) arriving at the coordinator, even correctly tagged.
  auto d = decode(bytes(encode(start_message(), kKey, Direction::kToCoordinator, ctx_of(1))), kKey,
                  Direction::kToCoordinator, ctx_of(1));
  EXPECT_EQ(d.status, Decoded::kBad);
}

// The give-up relays every node's ranks, each with its node (every node's failure file lists
// where every rank was); an agent's failure speaks only for its own node, whatever it claims.
TEST(RdzvProtocol, TheGiveUpRelaysEachRanksNodeAnAgentOnlyItsOwn) {
  NodeFailure f = node_failure(0, 1, 124, "rank 1 (node 1, local 0): hang");
  f.ranks = {{0, 0, "all_reduce (/w/t.py:3)", false, {}},
             {1, 1, "load_batch (/w/t.py:9)", false, {}}};
  const auto relayed = failure_from(Message{MsgType::kGiveUp, 0, 0, 0, failure_body(f)});
  EXPECT_EQ(relayed.ranks, f.ranks);
  const auto claimed = failure_from(Message{MsgType::kFailure, 1, 0, 0, failure_body(f)});
  ASSERT_EQ(claimed.ranks.size(), 2u);
  EXPECT_EQ(claimed.ranks[0].node_rank, 1);  // the sender's, not the body's 0
}

// A Stopped carries its node's last progress step (issue 53: the judge on node 0 reads the job's
// progress from every node); one without it (no progress line there, an older frame) is valid.
TEST(RdzvProtocol, AStoppedCarriesItsNodesStepOrNone) {
  const auto decoded = [](nlohmann::json body) {
    Message m{MsgType::kStopped, 1, 2, 0, std::move(body)};
    return decode(bytes(encode(m, kKey, Direction::kToCoordinator, ctx_of(1))), kKey,
                  Direction::kToCoordinator, ctx_of(1));
  };
  auto d = decoded({{"step", 39}});
  ASSERT_EQ(d.status, Decoded::kOk) << d.error;
  EXPECT_EQ(stopped_step(d.message.body), 39);
  d = decoded(nlohmann::json::object());
  ASSERT_EQ(d.status, Decoded::kOk) << d.error;
  EXPECT_FALSE(stopped_step(d.message.body));
  for (const nlohmann::json& step :
       {nlohmann::json(-1), nlohmann::json("39"), nlohmann::json(1.5)}) {
    d = decoded({{"step", step}});
    EXPECT_EQ(d.status, Decoded::kBad) << step;
  }
  // A rank out of range in a failure is refused too.
  Message f{MsgType::kFailure, 1, 0, 0, {{"exit_code", 1}, {"summary", "x"}, {"rank", -2}}};
  EXPECT_EQ(decode(bytes(encode(f, kKey, Direction::kToCoordinator, ctx_of(1))), kKey,
                   Direction::kToCoordinator, ctx_of(1))
                .status,
            Decoded::kBad);
}

TEST(RdzvProtocol, MalformedPayloadsRejectedEvenWhenAuthentic) {
  const std::vector<Message> bad = {
      {MsgType::kStart, 0, 0, 0, nlohmann::json::object()},                 // no port
      {MsgType::kStart, 0, 0, 0, {{"master_port", 0}}},                     // port 0
      {MsgType::kStart, 0, 0, 0, {{"master_port", 1}, {"retried_by", 7}}},  // not a text
      {MsgType::kStart, 0, 0, 0, {{"master_port", 1}, {"step_over", 7}}},   // not a text
      {MsgType::kStop,
       0,
       0,
       0,
       {{"exit_code", 1}, {"summary", "x"}, {"failed_node", 0}, {"fallbacks", "x"}}},
      {MsgType::kStart, 0, 0, 0, nlohmann::json::array({1, 2})},  // not an object
      {MsgType::kStop, 0, 0, 0, {{"exit_code", 300}, {"summary", "x"}, {"failed_node", 0}}},
      {MsgType::kStop,
       0,
       0,
       0,
       {{"exit_code", 1}, {"summary", "x"}, {"failed_node", 0}, {"signature", "ValueError"}}},
      {MsgType::kStop,
       0,
       0,
       0,
       {{"exit_code", 1},
        {"summary", "x"},
        {"failed_node", 0},
        {"signature", {{"type", "E"}, {"message", "m"}, {"step", -1}, {"cuda_oom", false}}}}},
      {MsgType::kGiveUp,
       0,
       0,
       0,
       {{"exit_code", 1}, {"summary", "x"}, {"failed_node", 0}, {"recent", {"a", "b", "c", "d"}}}},
      {MsgType::kHello, 0, 0, 0, {{"nonce", "zz"}}},
      {MsgType::kLost, 0, 0, 0, {{"why", std::string(kMaxText + 1, 'x')}}},
  };
  for (const auto& m : bad) {
    auto d = decode(bytes(encode(m, kKey, Direction::kToAgent, ctx_of(1))), kKey,
                    Direction::kToAgent, ctx_of(1));
    EXPECT_EQ(d.status, Decoded::kBad) << m.body.dump();
    EXPECT_NE(d.error.find("malformed"), std::string::npos) << d.error;
  }
}

TEST(RdzvProtocol, NonceHexRoundTrips) {
  auto n = random_nonce();
  EXPECT_EQ(nonce_from_hex(to_hex(n)), n);
  EXPECT_FALSE(nonce_from_hex("00"));
  EXPECT_FALSE(nonce_from_hex(std::string(32, 'G')));
  EXPECT_NE(random_nonce(), random_nonce());
}

TEST(RdzvToken, ExplicitWinsAndDerivedDependsOnJob) {
  EXPECT_EQ(derive_rdzv_token(std::string("s3cret"), "job-a"), "s3cret");
  EXPECT_EQ(derive_rdzv_token(std::nullopt, "job-a"), derive_rdzv_token(std::string(), "job-a"));
  EXPECT_NE(derive_rdzv_token(std::nullopt, "job-a"), derive_rdzv_token(std::nullopt, "job-b"));
  EXPECT_EQ(derive_rdzv_token(std::nullopt, "job-a").size(), 64u);
}

}  // namespace
}  // namespace tv::rdzv
