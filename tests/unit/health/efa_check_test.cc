#include "health/efa_check.h"

#include <gtest/gtest.h>

#include "health/nccl_api.h"
#include "health/nccl_plugin.h"
#include "tests/unit/fakes/fake_file_system.h"

namespace tv {
namespace {

using testing::FakeFileSystem;

void add_device(FakeFileSystem& fs, const std::string& name, const std::string& driver,
                const std::string& vendor, const std::string& uverbs, bool node) {
  const std::string dev = "/sys/class/infiniband/" + name + "/device";
  fs.add_link(dev + "/driver", "../../../../bus/pci/drivers/" + driver);
  fs.add_file(dev + "/vendor", vendor + "\n");
  fs.add_file(dev + "/infiniband_verbs/" + uverbs + "/dev", "231:192");
  if (node) fs.add_node("/dev/infiniband/" + uverbs);
}

TEST(EfaDevices, FoundWithNodes) {
  FakeFileSystem fs;
  add_device(fs, "rdmap16s27", "efa", "0x1d0f", "uverbs0", true);
  add_device(fs, "rdmap32s27", "efa", "0x1d0f", "uverbs1", true);
  auto inv = find_rdma_devices(fs);
  ASSERT_EQ(inv.efa.size(), 2u);
  EXPECT_EQ(efa_devices_check(inv, TransportRule::kEfa).outcome, Outcome::kPass);
}

TEST(EfaDevices, MissingUverbsNodeFailsWithAdvice) {
  FakeFileSystem fs;
  add_device(fs, "rdmap16s27", "efa", "0x1d0f", "uverbs0", false);
  auto r = efa_devices_check(find_rdma_devices(fs), TransportRule::kAny);
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.message.find("/dev/infiniband/uverbs0"), std::string::npos);
  EXPECT_NE(r.message.find("vpc.amazonaws.com/efa"), std::string::npos);
}

TEST(EfaDevices, Mlx5BesideEfaWarns) {
  FakeFileSystem fs;
  add_device(fs, "rdmap16s27", "efa", "0x1d0f", "uverbs0", true);
  add_device(fs, "mlx5_0", "mlx5_core", "0x15b3", "uverbs1", true);
  auto inv = find_rdma_devices(fs);
  EXPECT_EQ(inv.other.size(), 1u);
  auto r = efa_devices_check(inv, TransportRule::kEfa);
  EXPECT_EQ(r.outcome, Outcome::kWarn);
  EXPECT_NE(r.message.find("mlx5_0"), std::string::npos);
}

TEST(EfaDevices, VendorReadTrimmedAndBounded) {
  FakeFileSystem fs;  // no driver link: the vendor alone says EFA, once its newline is gone
  fs.add_file("/sys/class/infiniband/efa_0/device/vendor", "0x1d0f \n");
  fs.add_file("/sys/class/infiniband/big_0/device/vendor", "0x1d0f" + std::string(64 * 1024, ' '));
  auto inv = find_rdma_devices(fs);
  ASSERT_EQ(inv.efa.size(), 1u);
  EXPECT_EQ(inv.efa[0].name, "efa_0");
  EXPECT_EQ(inv.efa[0].vendor, "0x1d0f");
  ASSERT_EQ(inv.other.size(), 1u);  // over kSmallFileCap: not read, so not taken for EFA
  EXPECT_EQ(inv.other[0].vendor, "");
}

TEST(EfaDevices, NoneIsSkipUnlessRequired) {
  FakeFileSystem fs;
  EXPECT_EQ(efa_devices_check(find_rdma_devices(fs), TransportRule::kAny).outcome, Outcome::kSkip);
  EXPECT_EQ(efa_devices_check(find_rdma_devices(fs), TransportRule::kEfa).outcome, Outcome::kFail);
}

TEST(Libfabric, EnodataExplained) {
  LibfabricInfo i;
  i.loaded = true;
  i.path = "/usr/lib/x86_64-linux-gnu/libfabric.so.1";
  i.version = "1.17";
  i.provider = "efa";
  i.rc = -61;
  i.error = "No data available";
  auto r = libfabric_check(i, true, TransportRule::kEfa);
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.message.find("No data available"), std::string::npos);
  EXPECT_NE(r.message.find("uverbs"), std::string::npos);
  EXPECT_EQ(libfabric_check(i, false, TransportRule::kAny).outcome, Outcome::kSkip);
}

TEST(Libfabric, NotLoaded) {
  LibfabricInfo i;
  i.error = "libfabric.so.1 could not be loaded";
  EXPECT_EQ(libfabric_check(i, true, TransportRule::kAny).outcome, Outcome::kFail);
}

TEST(NcclApi, UniqueIdHexRoundTrip) {
  nccl::UniqueId id{};
  for (size_t i = 0; i < sizeof(id.internal); ++i) id.internal[i] = static_cast<char>(i * 7);
  nccl::UniqueId back{};
  ASSERT_TRUE(nccl::from_hex(nccl::to_hex(id), &back));
  EXPECT_EQ(0, std::memcmp(id.internal, back.internal, sizeof(id.internal)));
  EXPECT_FALSE(nccl::from_hex("abc", &back));
  EXPECT_EQ(nccl::version_string(22809), "2.28.9");
  EXPECT_EQ(nccl::version_string(21805), "2.18.5");
}

TEST(NcclPlugin, VersionFromBytes) {
  EXPECT_EQ(aws_ofi_version_in(std::string("\0NET/OFI Initializing aws-ofi-nccl 1.13.2-aws\0", 47)),
            "1.13.2-aws");
  EXPECT_EQ(aws_ofi_version_in("nothing"), "");
}

// Through a FileSystem: each of NCCL's names in each folder, in that order, with its bytes'
// version; what is not there is not listed.
TEST(NcclPlugin, FoundThroughTheFileSystemInSearchOrder) {
  testing::FakeFileSystem fs;
  fs.add_file("/b/libnccl-net-ofi.so", "Using aws-ofi-nccl 1.18.0");
  fs.add_file("/a/libnccl-net-aws-ofi.so", "");
  fs.add_file("/a/libnccl-net.so", "Initializing aws-ofi-nccl 1.13.2-aws");
  const auto found = find_net_plugins({"/a", "/b", "/none"}, fs);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].path, "/a/libnccl-net.so");
  EXPECT_EQ(found[0].version, "1.13.2-aws");
  EXPECT_EQ(found[1].path, "/a/libnccl-net-aws-ofi.so");
  EXPECT_EQ(found[1].version, "");
  EXPECT_EQ(found[2].path, "/b/libnccl-net-ofi.so");
  EXPECT_EQ(found[2].version, "1.18.0");
}

TEST(NcclPlugin, NoneDisables) {
  Environment env;
  env.set("NCCL_NET_PLUGIN", "none");
  EXPECT_EQ(nccl_plugin_check({{"/opt/amazon/ofi-nccl/lib/libnccl-net.so", "1.18.0"}}, env, true,
                              TransportRule::kEfa)
                .outcome,
            Outcome::kFail);
  EXPECT_EQ(nccl_plugin_check({}, Environment{}, true, TransportRule::kEfa).outcome,
            Outcome::kFail);
  EXPECT_EQ(nccl_plugin_check({}, Environment{}, false, TransportRule::kAny).outcome,
            Outcome::kSkip);
}

}  // namespace
}  // namespace tv
