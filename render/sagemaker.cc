// SageMaker CreateTrainingJob request (docs/platforms/sagemaker.md). The image's own ENTRYPOINT
// is not relied on: ContainerEntrypoint / ContainerArguments start trainvisor explicitly.
#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "common/stop_window.h"
#include "render/render.h"

namespace tv {
namespace {

using nlohmann::json;

constexpr const char* kCheckpointPath = "/opt/ml/checkpoints";

Error config_error(const std::string& what) { return Error{exit_code::kConfig, what}; }

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

// trainvisor's own lines, read from the job's CloudWatch log (its goodput summary at the end).
json metric_definitions() {
  return json::array(
      {{{"Name", "trainvisor:goodput"}, {"Regex", "goodput +([0-9.]+)"}},
       {{"Name", "trainvisor:productive_seconds"}, {"Regex", "productive +([0-9.]+) s"}},
       {{"Name", "trainvisor:restarts"}, {"Regex", "restarts +([0-9]+)"}},
       {{"Name", "trainvisor:last_step"}, {"Regex", "last step +([0-9]+)"}}});
}

Status check_sagemaker_fields(const JobConfig& c) {
  if (!c.sagemaker)
    return config_error(
        "sagemaker: missing (role_arn and output_s3_uri are needed for --target sagemaker)");
  if (!c.instance_type) return config_error("instance_type: missing (e.g. \"ml.p5.48xlarge\")");
  if (c.instance_type->rfind("ml.", 0) != 0)
    return config_error("instance_type: SageMaker instance types start with \"ml.\", got \"" +
                        *c.instance_type + "\"");
  if (!c.checkpoint_s3_uri)
    return config_error("checkpoint_s3_uri: missing (SageMaker syncs " +
                        std::string(kCheckpointPath) + " to it; resume needs it)");
  return ok_status();
}

}  // namespace

Result<Rendered> render_sagemaker(const JobConfig& c) {
  if (auto s = check_sagemaker_fields(c); !s) return s.error();
  Rendered out;
  const SageMakerConfig& sm = *c.sagemaker;
  const int grace = c.grace_period.value_or(stop_window("sagemaker", false).grace_seconds);
  const auto args = trainvisor_run_args(c, grace, kCheckpointPath);
  if (auto s = check_arguments(args); !s) return s.error();
  json req = {
      {"TrainingJobName", c.name},
      {"RoleArn", sm.role_arn},
      {"AlgorithmSpecification",
       {{"TrainingImage", c.image},
        {"TrainingInputMode", "File"},
        {"ContainerEntrypoint", json::array({c.trainvisor})},
        {"ContainerArguments", args},
        {"MetricDefinitions", metric_definitions()}}},
      {"OutputDataConfig", {{"S3OutputPath", sm.output_s3_uri}}},
      {"ResourceConfig",
       {{"InstanceType", *c.instance_type},
        {"InstanceCount", c.nodes},
        {"VolumeSizeInGB", sm.volume_size_gb}}},
      {"StoppingCondition", {{"MaxRuntimeInSeconds", sm.max_runtime_seconds}}},
      {"CheckpointConfig", {{"S3Uri", *c.checkpoint_s3_uri}, {"LocalPath", kCheckpointPath}}},
      {"RetryStrategy", {{"MaximumRetryAttempts", sm.max_retry_attempts}}}};
  if (!sm.subnets.empty())
    req["VpcConfig"] = {{"Subnets", sm.subnets}, {"SecurityGroupIds", sm.security_group_ids}};
  if (c.checkpoint_dir != kCheckpointPath)
    out.notes.push_back("checkpoint_dir is " + c.checkpoint_dir + ": SageMaker uses " +
                        kCheckpointPath + " (CheckpointConfig.LocalPath)");
  if (c.storage)
    out.notes.push_back("storage is not used by sagemaker (FSx goes in InputDataConfig, by hand)");
  if (c.efa_per_node > 0)
    out.notes.push_back(
        "efa_per_node is not used by sagemaker: EFA-capable ml. instances get it on their own");
  out.text = req.dump(2) + "\n";
  return out;
}

}  // namespace tv
