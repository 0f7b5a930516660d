// read_observability_options (launcher/plan/observability_options.h), table by table: the options
// parsed with run's own table (cli/run_options.cc), as run_command does.
#include "launcher/plan/observability_options.h"

#include <gtest/gtest.h>

#include "cli/run_options.h"

namespace tv {
namespace {

Result<ObservabilityConfig> read(std::vector<std::string> args, bool in_kubernetes) {
  args.insert(args.end(), {"--no-python", "/bin/true"});
  auto o = parse_options(run_option_specs(), args, Environment(), ParseMode{true, true});
  if (!o) return o.error();
  return read_observability_options(*o, in_kubernetes);
}

TEST(ObservabilityOptions, TheMetricsAddressIsLoopbackOutsideAKubernetesPod) {
  struct Row {
    std::vector<std::string> args;
    bool in_kubernetes;
    std::string want;
  };
  for (const Row& r : std::initializer_list<Row>{
           {{}, false, "127.0.0.1"},
           {{}, true, "0.0.0.0"},  // the kubelet's probes and Prometheus reach the pod's address
           {{"--metrics-address", "10.1.2.3"}, true, "10.1.2.3"},
           {{"--metrics-address", "10.1.2.3"}, false, "10.1.2.3"},
       }) {
    auto c = read(r.args, r.in_kubernetes);
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->metrics_address, r.want);
  }
}

TEST(ObservabilityOptions, TheGoodputsFiguresAndIntervals) {
  auto c = read({"--metrics-port", "9400", "--mtbf-hours", "2.5", "--flops-per-step", "1e12",
                 "--ledger-interval", "5", "--progress-regex", "step (?P<step>\\d+)"},
                false);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->metrics_port, 9400);
  EXPECT_EQ(c->goodput.mtbf_hours, 2.5);
  EXPECT_EQ(c->goodput.flops_per_step, 1e12);
  EXPECT_EQ(c->ledger_interval, 5);
  EXPECT_EQ(c->progress_regex.value_or(""), "step (?P<step>\\d+)");
}

TEST(ObservabilityOptions, AnMtbfOfNoHoursIsRefusedNamingIt) {
  auto c = read({"--mtbf-hours", "0"}, false);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().exit_code(), 78);
  EXPECT_EQ(c.error().message, "--mtbf-hours=\"0\": expected a number of hours above 0");
}

}  // namespace
}  // namespace tv
