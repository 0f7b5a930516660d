// The preflight phase's two messages (launcher/rendezvous/rdzv_protocol.h): kPreflight carries node
// 0's ncclUniqueId, kProbeResult a node's verdict. Both authenticated and validated like every
// frame.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "launcher/rendezvous/rdzv_protocol.h"

namespace tv::rdzv {
namespace {

const std::string kKey = "secret-token";

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

Context ctx() {
  Nonce a{}, b{};
  a.fill(7);
  b.fill(9);
  return make_context(a, b);
}

Decoded round_trip(const Message& m, Direction dir) {
  return decode(bytes(encode(m, kKey, dir, ctx())), kKey, dir, ctx());
}

const std::string kId = std::string(64, 'a') + std::string(64, '0') + std::string(128, 'f');

TEST(RdzvPreflightProtocol, PreflightCarriesTheUniqueIdToAgents) {
  auto d = round_trip({MsgType::kPreflight, 0, 0, 3, {{"unique_id", kId}}}, Direction::kToAgent);
  ASSERT_EQ(d.status, Decoded::kOk) << d.error;
  EXPECT_EQ(d.message.type, MsgType::kPreflight);
  EXPECT_EQ(d.message.body["unique_id"], kId);
  EXPECT_STREQ(type_name(MsgType::kPreflight), "preflight");
  // "" says node 0 has no id (no GPU there).
  EXPECT_EQ(
      round_trip({MsgType::kPreflight, 0, 0, 3, {{"unique_id", ""}}}, Direction::kToAgent).status,
      Decoded::kOk);
}

TEST(RdzvPreflightProtocol, ProbeResultCarriesTheVerdictToTheCoordinator) {
  auto d = round_trip({MsgType::kProbeResult,
                       2,
                       0,
                       4,
                       {{"passed", false}, {"summary", "node 2: nccl-transport: socket"}}},
                      Direction::kToCoordinator);
  ASSERT_EQ(d.status, Decoded::kOk) << d.error;
  EXPECT_EQ(d.message.node_rank, 2);
  EXPECT_FALSE(d.message.body["passed"].get<bool>());
  EXPECT_EQ(d.message.body["summary"], "node 2: nccl-transport: socket");
  EXPECT_STREQ(type_name(MsgType::kProbeResult), "probe-result");
}

TEST(RdzvPreflightProtocol, EachGoesOneWayOnly) {
  EXPECT_TRUE(sent_to(MsgType::kPreflight, Direction::kToAgent));
  EXPECT_FALSE(sent_to(MsgType::kPreflight, Direction::kToCoordinator));
  EXPECT_TRUE(sent_to(MsgType::kProbeResult, Direction::kToCoordinator));
  EXPECT_FALSE(sent_to(MsgType::kProbeResult, Direction::kToAgent));
  EXPECT_EQ(
      round_trip({MsgType::kPreflight, 0, 0, 0, {{"unique_id", kId}}}, Direction::kToCoordinator)
          .status,
      Decoded::kBad);
  EXPECT_EQ(round_trip({MsgType::kProbeResult, 0, 0, 0, {{"passed", true}, {"summary", ""}}},
                       Direction::kToAgent)
                .status,
            Decoded::kBad);
}

TEST(RdzvPreflightProtocol, MalformedBodiesRejectedEvenWhenAuthentic) {
  const nlohmann::json bad_ids[] = {nlohmann::json::object(),
                                    {{"unique_id", 5}},
                                    {{"unique_id", kId.substr(1)}},
                                    {{"unique_id", kId + "00"}},
                                    {{"unique_id", "G" + kId.substr(1)}},
                                    {{"unique_id", "A" + kId.substr(1)}}};
  for (const auto& body : bad_ids)
    EXPECT_EQ(round_trip({MsgType::kPreflight, 0, 0, 0, body}, Direction::kToAgent).status,
              Decoded::kBad)
        << body.dump();
  const nlohmann::json bad_results[] = {
      {{"summary", "x"}},
      {{"passed", 1}, {"summary", "x"}},
      {{"passed", true}},
      {{"passed", true}, {"summary", std::string(kMaxText + 1, 'x')}}};
  for (const auto& body : bad_results)
    EXPECT_EQ(round_trip({MsgType::kProbeResult, 0, 0, 0, body}, Direction::kToCoordinator).status,
              Decoded::kBad)
        << body.dump().substr(0, 80);
}

TEST(RdzvPreflightProtocol, TamperedUniqueIdFailsAuthentication) {
  std::string frame = encode({MsgType::kPreflight, 0, 0, 0, {{"unique_id", kId}}}, kKey,
                             Direction::kToAgent, ctx());
  frame[kHeaderSize + 20] ^= 1;  // inside the hex
  EXPECT_EQ(decode(bytes(frame), kKey, Direction::kToAgent, ctx()).status, Decoded::kBad);
}

// The fuzzer's seeds for these types are authentic frames (key "fuzz-key", zero context).
TEST(RdzvPreflightProtocol, FuzzSeedsDecode) {
  const std::string dir = std::string(TV_TESTDATA) + "/../fuzz/corpus/fuzz_rdzv_message/";
  const std::pair<const char*, Direction> seeds[] = {{"preflight", Direction::kToAgent},
                                                     {"preflight_noid", Direction::kToAgent},
                                                     {"probe_result", Direction::kToCoordinator},
                                                     {"join", Direction::kToCoordinator},
                                                     {"join_unassigned", Direction::kToCoordinator},
                                                     {"welcome", Direction::kToAgent}};
  for (const auto& [name, dir_of] : seeds) {
    std::ifstream in(dir + name, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    auto d = decode(bytes(buf.str()), "fuzz-key", dir_of, Context{});
    EXPECT_EQ(d.status, Decoded::kOk) << name << ": " << d.error;
  }
}

}  // namespace
}  // namespace tv::rdzv
