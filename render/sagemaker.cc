// SageMaker CreateTrainingJob request (docs/platforms/sagemaker.md). The image's own ENTRYPOINT
// is not relied on: ContainerEntrypoint / ContainerArguments start trainvisor explicitly.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/exit_codes.h"
#include "common/instance_facts.h"
#include "common/platforms.h"
#include "render/platform_limits.h"
#include "render/render.h"

namespace tv {
namespace {

using nlohmann::json;

constexpr const char* kCheckpointPath = "/opt/ml/checkpoints";

Error config_error(const std::string& what) { return Error{ErrorKind::kConfig, what}; }

// CreateTrainingJob's limits that botocore's validator does not check (it checks minimums only).
Status check_arguments(const std::vector<std::string>& args) {
  if (args.size() > 100)
    return config_error(
        "command: SageMaker's ContainerArguments take at most 100 words, the run command has " +
        std::to_string(args.size()));
  for (const auto& a : args)
    if (a.size() > 256)
      return config_error(
          "command: SageMaker's ContainerArguments take words of at most 256 characters: \"" +
          a.substr(0, 40) + "...\"");
  return ok_status();
}

// SageMaker applies each Regex to every line of the job's log and keeps its first group. They read
// node 0's one-line record, `trainvisor metrics: goodput=0.930 ... restarts=1 step=1200`, logged
// every kMetricsLogSeconds and at the end (format_metrics_line, launcher/observability/summary.h):
// values while the job trains, and never a line of the goodput summary table, whose goodput is
// written `<= 0.997` when it is an upper bound and whose job table repeats the names.
constexpr int kMetricsLogSeconds = 60;

json metric_definitions() {
  const std::string record = "trainvisor metrics: ";
  auto value = [&](const char* name, const char* key, const char* number) {
    return json{{"Name", std::string("trainvisor:") + name},
                {"Regex", record + (std::string(key) == "goodput" ? "" : ".* ") + key + "=(" +
                              number + ")"}};
  };
  const char* real = "[0-9]+\\.?[0-9]*";
  return json::array({value("goodput", "goodput", real),
                      value("goodput_upper_bound", "goodput_upper_bound", "[01]"),
                      value("productive_seconds", "productive_s", real),
                      value("restarts", "restarts", "[0-9]+"), value("last_step", "step", "[0-9]+"),
                      value("job_goodput", "job_goodput", real)});
}

// --metrics-log-interval (unless run_args set it), --workdir, --instance-groups: before run_args
// and the command (after a "--" of run_args they would be the command's).
std::vector<std::string> owned_args(const JobConfig& c) {
  std::vector<std::string> owned = workdir_args(c);
  bool metrics = true;
  for (const auto& a : c.run_args) metrics = metrics && a.rfind("--metrics-log-interval", 0) != 0;
  if (metrics) {
    owned.push_back("--metrics-log-interval");
    owned.push_back(std::to_string(kMetricsLogSeconds));
  }
  const auto& groups = c.sagemaker->training_groups;
  if (!groups.empty()) {
    std::string names;
    for (const auto& g : groups) names += (names.empty() ? "" : ",") + g;
    owned.push_back("--instance-groups");
    owned.push_back(names);
  }
  return owned;
}

std::string ml(const std::string& type) { return "ml." + std::string(without_ml_prefix(type)); }

// InputDataConfig: one S3 channel each, under /opt/ml/input/data/<name>.
json input_data_config(const SageMakerConfig& sm) {
  json channels = json::array();
  for (const auto& ch : sm.channels) {
    json s3 = {{"S3DataType", ch.s3_data_type},
               {"S3Uri", ch.s3_uri},
               {"S3DataDistributionType", ch.distribution}};
    if (!ch.instance_groups.empty()) s3["InstanceGroupNames"] = ch.instance_groups;
    json entry = {{"ChannelName", ch.name}, {"DataSource", {{"S3DataSource", s3}}}};
    if (ch.input_mode) entry["InputMode"] = *ch.input_mode;
    channels.push_back(entry);
  }
  return channels;
}

// A heterogeneous cluster: InstanceGroups replace InstanceType and InstanceCount
// (CreateTrainingJob, ResourceConfig.InstanceGroups). `nodes` is the training groups' instances,
// all of `instance_type` (one --nproc-per-node), so `run --nnodes` matches what the hosts compute.
Result<json> resource_config(const JobConfig& c, const SageMakerConfig& sm) {
  json rc = {{"VolumeSizeInGB", sm.volume_size_gb}};
  if (sm.instance_groups.empty()) {
    rc["InstanceType"] = *c.instance_type;
    rc["InstanceCount"] = c.nodes;
    return rc;
  }
  json groups = json::array();
  int training = 0;
  for (const auto& g : sm.instance_groups) {
    groups.push_back({{"InstanceType", ml(g.instance_type)},
                      {"InstanceCount", g.count},
                      {"InstanceGroupName", g.name}});
    if (std::find(sm.training_groups.begin(), sm.training_groups.end(), g.name) ==
        sm.training_groups.end())
      continue;
    training += g.count;
    if (ml(g.instance_type) != *c.instance_type)
      return config_error("sagemaker.instance_groups " + g.name + ": instance_type " +
                          ml(g.instance_type) + " is not instance_type " + *c.instance_type +
                          ": every training group has the job's instance type (one "
                          "--nproc-per-node)");
  }
  if (training != c.nodes)
    return config_error("nodes: " + std::to_string(c.nodes) + ", but the training groups have " +
                        std::to_string(training) +
                        " instances: expected nodes = the training groups' count");
  rc["InstanceGroups"] = groups;
  return rc;
}

// CreateTrainingJob's Environment: at most 100 entries, values of at most 512 characters; it has
// no secret references (a value in it is visible in DescribeTrainingJob).
Result<json> environment(const JobConfig& c) {
  if (!c.secrets.empty())
    return config_error("secrets." + c.secrets.begin()->first +
                        ": SageMaker training jobs have no secret references (Environment values "
                        "are shown by DescribeTrainingJob): read it from Secrets Manager in the "
                        "training script with the job's role, or render without it");
  if (c.env.size() > 100)
    return config_error("env: SageMaker takes at most 100 variables, got " +
                        std::to_string(c.env.size()));
  json env = json::object();
  for (const auto& [name, value] : c.env) {
    if (value.size() > 512)
      return config_error("env." + name + ": SageMaker takes values of at most 512 characters");
    env[name] = value;
  }
  return env;
}

// NAME-SUFFIX within the 63 characters CreateTrainingJob allows, ending in a letter or digit.
std::string job_name(const std::string& name, const std::string& suffix) {
  if (suffix.empty()) return name;
  std::string head = name.substr(0, 63 - 1 - std::min<size_t>(suffix.size(), 62));
  while (!head.empty() && head.back() == '-') head.pop_back();
  return (head + "-" + suffix).substr(0, 63);
}

Status check_sagemaker_fields(const JobConfig& c) {
  if (!c.sagemaker)
    return config_error(
        "sagemaker: missing (role_arn and output_s3_uri are needed for --target sagemaker)");
  if (!c.instance_type) return config_error("instance_type: missing (e.g. \"ml.p5.48xlarge\")");
  if (!c.checkpoint_s3_uri)
    return config_error("checkpoint_s3_uri: missing (SageMaker syncs " +
                        std::string(kCheckpointPath) + " to it; resume needs it)");
  return ok_status();
}

}  // namespace

Result<Rendered> render_sagemaker(const JobConfig& c, const RenderOptions& o) {
  if (c.spare_nodes > 0)
    return config_error("spare_nodes: " + std::to_string(c.spare_nodes) +
                        ": expected 0 for --target sagemaker (its host list fixes every host's "
                        "part, and a failed host fails the training job: trainvisor run refuses "
                        "spares there)");
  if (auto s = check_sagemaker_fields(c); !s) return s.error();
  auto env = environment(c);
  if (!env) return env.error();
  static const std::regex suffix_word("([A-Za-z0-9]+(-[A-Za-z0-9]+)*)?");
  if (!std::regex_match(o.name_suffix, suffix_word))
    return config_error("--name-suffix: expected letters, digits and '-' between them, got \"" +
                        o.name_suffix + "\"");
  Rendered out;
  const SageMakerConfig& sm = *c.sagemaker;
  const int grace = c.grace_period.value_or(stop_window("sagemaker", false).grace_seconds);
  const auto args = trainvisor_run_args(c, "sagemaker", grace, kCheckpointPath, owned_args(c));
  if (auto s = check_arguments(args); !s) return s.error();
  auto resources = resource_config(c, sm);
  if (!resources) return resources.error();
  const std::string name = job_name(c.name, o.name_suffix);
  if (auto s = check_name(platform_limits::kSageMakerTrainingJob, "name", name); !s)
    return s.error();
  json req = {
      {"TrainingJobName", name},
      {"RoleArn", sm.role_arn},
      {"AlgorithmSpecification",
       {{"TrainingImage", c.image},
        {"TrainingInputMode", "File"},
        {"ContainerEntrypoint", json::array({c.trainvisor})},
        {"ContainerArguments", args},
        {"MetricDefinitions", metric_definitions()}}},
      {"OutputDataConfig", {{"S3OutputPath", sm.output_s3_uri}}},
      {"ResourceConfig", *resources},
      {"StoppingCondition", {{"MaxRuntimeInSeconds", c.timeout_s.value_or(86400)}}},
      {"CheckpointConfig", {{"S3Uri", *c.checkpoint_s3_uri}, {"LocalPath", kCheckpointPath}}},
      {"RetryStrategy", {{"MaximumRetryAttempts", sm.max_retry_attempts}}}};
  if (!env->empty()) req["Environment"] = *env;
  if (!sm.channels.empty()) req["InputDataConfig"] = input_data_config(sm);
  if (sm.inter_container_encryption) req["EnableInterContainerTrafficEncryption"] = true;
  if (!sm.subnets.empty())
    req["VpcConfig"] = {{"Subnets", sm.subnets}, {"SecurityGroupIds", sm.security_group_ids}};
  if (c.checkpoint_dir != kCheckpointPath)
    out.notes.push_back("checkpoint_dir is " + c.checkpoint_dir + ": SageMaker uses " +
                        kCheckpointPath + " (CheckpointConfig.LocalPath)");
  out.text = req.dump(2) + "\n";
  return out;
}

}  // namespace tv
