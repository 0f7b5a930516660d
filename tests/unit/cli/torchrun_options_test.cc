// torchrun's options on `run`: both spellings, the endpoint/conf/nnodes mappings, refusals by name.
#include "cli/torchrun_options.h"

#include <gtest/gtest.h>

#include "cli/run_options.h"
#include "common/options.h"

namespace tv {
namespace {

Result<Options> applied(std::vector<std::string> args) {
  args.push_back("train.py");
  auto o = parse_options(run_option_specs(), args, Environment(), ParseMode{true, false});
  if (!o) return o.error();
  if (auto s = apply_torchrun_options(*o); !s) return s.error();
  return *o;
}

std::string value(const Result<Options>& o, const std::string& name) {
  EXPECT_TRUE(o.ok()) << (o.ok() ? "" : o.error().message);
  return o.ok() ? o->value_or(name, "<none>") : "<error>";
}

TEST(TorchrunOptions, EndpointIsNodeZerosCoordinator) {
  for (auto args : {std::vector<std::string>{"--rdzv_endpoint=head:5555"},
                    std::vector<std::string>{"--rdzv-endpoint", "head:5555"}}) {
    auto o = applied(args);
    EXPECT_EQ(value(o, "master-addr"), "head");
    EXPECT_EQ(value(o, "rdzv-port"), "5555");
    EXPECT_EQ(o->get("master-addr")->origin, "--rdzv-endpoint");
  }
  EXPECT_EQ(value(applied({"--rdzv_endpoint=[fd00::1]:29401"}), "master-addr"), "fd00::1");
  EXPECT_EQ(value(applied({"--rdzv_endpoint=[fd00::1]"}), "rdzv-port"), "29400");
  EXPECT_EQ(value(applied({"--rdzv_endpoint=10.0.0.1"}), "rdzv-port"), "29400");
  for (const char* bad : {"fd00::1:5", "[fd00::1", "head:", ":5", "head:70000", "[]:5"}) {
    auto o = applied({std::string("--rdzv_endpoint=") + bad});
    ASSERT_FALSE(o.ok()) << bad;
    EXPECT_EQ(o.error().exit_code(), 78);
    EXPECT_NE(o.error().message.find("--rdzv-endpoint"), std::string::npos);
  }
  auto clash = applied({"--master_addr=a", "--rdzv_endpoint=b:1"});
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.error().message.find("--master-addr"), std::string::npos);
  EXPECT_EQ(value(applied({"--master_addr=a", "--rdzv_endpoint=a:1"}), "master-addr"), "a");
}

TEST(TorchrunOptions, BackendIdConf) {
  EXPECT_TRUE(applied({"--rdzv_backend=c10d"}).ok());
  EXPECT_TRUE(applied({"--rdzv_backend", "static"}).ok());
  for (const char* b : {"etcd", "etcd-v2"}) {
    auto o = applied({"--rdzv_backend", b});
    ASSERT_FALSE(o.ok());
    EXPECT_EQ(o.error().exit_code(), 78);  // a recognised option with a bad value
    EXPECT_NE(o.error().message.find("--rdzv-backend=\"" + std::string(b)), std::string::npos);
    EXPECT_NE(o.error().message.find("expected c10d or static"), std::string::npos);
  }
  EXPECT_EQ(applied({"--rdzv_backend=zk"}).error().exit_code(), 78);
  EXPECT_EQ(value(applied({"--rdzv_id=job-7"}), "run-id"), "job-7");
  EXPECT_EQ(value(applied({"--rdzv_id=job-7", "--run-id=r"}), "run-id"), "r");
  auto c = applied({"--rdzv_conf=join_timeout=60,read_timeout=7,last_call_timeout=1"});
  EXPECT_EQ(value(c, "rdzv-timeout"), "60");
  EXPECT_EQ(value(c, "peer-timeout"), "7");
  EXPECT_EQ(value(c, "rdzv-last-call"), "1");
  EXPECT_EQ(value(applied({"--rdzv_conf=join_timeout=60", "--rdzv-timeout=5"}), "rdzv-timeout"),
            "5");
  auto other = applied({"--rdzv_conf", "join_timeout=1,is_host=1"});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().exit_code(), 78);
  EXPECT_NE(other.error().message.find("is_host"), std::string::npos);
  EXPECT_EQ(applied({"--rdzv_conf=join_timeout=x"}).error().exit_code(), 78);
  EXPECT_EQ(applied({"--rdzv_conf=join_timeout"}).error().exit_code(), 78);
}

TEST(TorchrunOptions, NnodesRange) {
  EXPECT_EQ(value(applied({"--nnodes=2:2"}), "nnodes"), "2");
  EXPECT_EQ(value(applied({"--nnodes", "3"}), "nnodes"), "3");
  // MIN < MAX: elastic membership, left for the topology (launcher/topology/topology.cc).
  EXPECT_EQ(value(applied({"--nnodes=1:4"}), "nnodes"), "1:4");
  auto bad = applied({"--nnodes=4:1"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().exit_code(), 78);
  EXPECT_NE(bad.error().message.find("expected N or MIN:MAX with 1 <= MIN <= MAX"),
            std::string::npos);
  EXPECT_EQ(applied({"--nnodes=a:b"}).error().exit_code(), 78);
}

TEST(TorchrunOptions, RefusedByNameOrAcceptedAtDefault) {
  EXPECT_TRUE(applied({"--tee=0", "--redirects", "0", "--start_method=fork", "--run_path"}).ok());
  EXPECT_TRUE(applied({"--signals_to_handle=SIGTERM,SIGINT,SIGHUP,SIGQUIT"}).ok());
  for (auto [flag, name] : std::vector<std::pair<std::string, std::string>>{
           {"--tee=3", "--tee"},
           {"--redirects=0:3,1:2", "--redirects"},
           {"--local_ranks_filter=0", "--local-ranks-filter"},
           {"--local_addr=h", "--local-addr"},
           {"--logs_specs=x", "--logs-specs"},
           {"--numa_binding=node", "--numa-binding"},
           {"--event_log_handler=console", "--event-log-handler"},
           {"--signals_to_handle=SIGUSR1", "--signals-to-handle"}}) {
    auto o = applied({flag});
    ASSERT_FALSE(o.ok()) << flag;
    EXPECT_EQ(o.error().exit_code(), 78) << flag;
    EXPECT_NE(o.error().message.find(name), std::string::npos) << o.error().message;
    EXPECT_NE(o.error().message.find(": expected "), std::string::npos) << o.error().message;
  }
  EXPECT_NE(applied({"--tee=3"}).error().message.find("expected 0"), std::string::npos);
  EXPECT_NE(applied({"--local_addr=h"}).error().message.find("expected no --local-addr"),
            std::string::npos);
  auto shorty = applied({"-t", "3"});  // an option trainvisor does not know: usage
  ASSERT_FALSE(shorty.ok());
  EXPECT_EQ(shorty.error().exit_code(), 64);
  EXPECT_NE(shorty.error().message.find("-t"), std::string::npos);
}

// torchrun reads PET_<NAME> for every option (run.py's `env` action); the rendezvous backend,
// id and conf are read so too. A flag wins.
TEST(TorchrunOptions, PetRendezvousVariables) {
  const Environment env({{"PET_RDZV_ID", "job9"},
                         {"PET_RDZV_BACKEND", "c10d"},
                         {"PET_RDZV_CONF", "join_timeout=77"}});
  auto o = parse_options(run_option_specs(), {"train.py"}, env, ParseMode{true, true});
  ASSERT_TRUE(o.ok()) << o.error().message;
  ASSERT_TRUE(apply_torchrun_options(*o).ok());
  EXPECT_EQ(o->value_or("run-id", ""), "job9");
  EXPECT_EQ(o->value_or("rdzv-backend", ""), "c10d");
  EXPECT_EQ(o->value_or("rdzv-timeout", ""), "77");
  auto flag = parse_options(run_option_specs(), {"--rdzv_id", "mine", "train.py"}, env,
                            ParseMode{true, true});
  ASSERT_TRUE(flag.ok() && apply_torchrun_options(*flag).ok());
  EXPECT_EQ(flag->value_or("run-id", ""), "mine");
  const Environment etcd({{"PET_RDZV_BACKEND", "etcd"}});
  auto refused = parse_options(run_option_specs(), {"train.py"}, etcd, ParseMode{true, true});
  ASSERT_TRUE(refused.ok());
  auto s = apply_torchrun_options(*refused);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("PET_RDZV_BACKEND"), std::string::npos) << s.error().message;
}

// PET_RDZV_ENDPOINT alone names the coordinator, as an explicit value (the topology's explicit
// source takes it: its origin is not a bare PET_ name); a flag wins, --master-addr included.
TEST(TorchrunOptions, PetRendezvousEndpoint) {
  const Environment env({{"PET_RDZV_ENDPOINT", "head:5555"}});
  auto parsed = [&](std::vector<std::string> args) {
    args.push_back("train.py");
    auto o = parse_options(run_option_specs(), args, env, ParseMode{true, true});
    EXPECT_TRUE(o.ok()) << o.error().message;
    auto s = apply_torchrun_options(*o);
    EXPECT_TRUE(s.ok()) << s.error().message;
    return *o;
  };
  auto o = parsed({});
  EXPECT_EQ(o.value_or("master-addr", ""), "head");
  EXPECT_EQ(o.value_or("rdzv-port", ""), "5555");
  EXPECT_EQ(o.get("master-addr")->origin, "env PET_RDZV_ENDPOINT");
  o = parsed({"--rdzv-endpoint", "other:7"});
  EXPECT_EQ(o.value_or("master-addr", ""), "other");
  EXPECT_EQ(o.value_or("rdzv-port", ""), "7");
  o = parsed({"--master-addr", "mine"});  // no conflict: the flag wins over the variable
  EXPECT_EQ(o.value_or("master-addr", ""), "mine");
  EXPECT_EQ(o.value_or("rdzv-port", ""), "5555");
}

}  // namespace
}  // namespace tv
