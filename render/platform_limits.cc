#include "render/platform_limits.h"

#include <nlohmann/json.hpp>
#include <regex>

#include "common/exit_codes.h"

namespace tv {
namespace platform_limits {

const NameRule kKubernetesNamespace = {
    "a Kubernetes namespace", "[a-z0-9]([-a-z0-9]*[a-z0-9])?", 63,
    "an RFC 1123 label: lowercase letters, digits and '-', starting and ending with a letter or "
    "digit",
    "Kubernetes docs, Object Names and IDs: namespaces are RFC 1123 label names"};

const NameRule kPyTorchJobName = {
    "a PyTorchJob name", "[a-z]([-a-z0-9]*[a-z0-9])?", 63,
    "an RFC 1035 label: lowercase letters, digits and '-', starting with a letter, ending with a "
    "letter or digit",
    "kubeflow/training-operator v1.8-v1.9 pkg/webhooks/pytorch/pytorchjob_webhook.go "
    "validatePyTorchJob, NameIsDNS1035Label (v1.7: "
    "pkg/apis/kubeflow.org/v1/pytorch_validation.go)"};

const NameRule kKubernetesService = {
    "the operator's pod and Service name <name>-master-0 / <name>-worker-<i>",
    "[a-z]([-a-z0-9]*[a-z0-9])?", 63, "an RFC 1035 label of at most 63 characters: a shorter name",
    "Kubernetes docs, Object Names and IDs and Service: a Service name is an RFC 1035 label; "
    "kubeflow/training-operator names each replica's Service and pod <job>-<type>-<index>"};

const NameRule kSageMakerTrainingJob = {
    "a SageMaker training job name", "[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", 63,
    "letters, digits and '-', starting and ending with a letter or digit",
    "SageMaker API reference, CreateTrainingJob TrainingJobName (botocore's sagemaker model: max "
    "63, pattern ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62})"};

const NameRule kBatchJobDefinition = {
    "an AWS Batch job definition name", "[A-Za-z0-9_-]+", 128,
    "uppercase and lowercase letters, digits, '-' and '_'",
    "AWS Batch API reference, RegisterJobDefinition jobDefinitionName: \"up to 128 letters long. "
    "It can contain uppercase and lowercase letters, numbers, hyphens (-), and underscores (_)\""};

constexpr std::string_view kLabels =
    "Kubernetes docs, Labels and Selectors, \"Syntax and character set\"; "
    "kubernetes/apimachinery pkg/util/validation/validation.go";

const NameRule kLabelKeyPrefix = {
    "a label key's prefix", "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", 253,
    "a DNS subdomain: lowercase letters, digits, '-' and '.', followed by '/'", kLabels};

const NameRule kLabelKeyName = {"a label key's name", "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
                                63,
                                "letters, digits, '-', '_' and '.', starting and ending with a "
                                "letter or digit (IsQualifiedName)",
                                kLabels};

const NameRule kLabelValue = {
    "a label value", "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", 63,
    "empty, or letters, digits, '-', '_' and '.', starting and ending with a letter or digit "
    "(IsValidLabelValue)",
    kLabels};

const NameRule kServiceAccountName = {
    "a ServiceAccount name", "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
    253, "a DNS subdomain: lowercase letters, digits, '-' and '.'",
    "Kubernetes docs, Object Names and IDs; kubernetes pkg/apis/core/validation "
    "ValidateServiceAccountName (NameIsDNSSubdomain)"};

const NameRule kSageMakerChannelName = {
    "a SageMaker channel name", "[A-Za-z0-9.\\-_]+", 64, "letters, digits, '.', '-' and '_'",
    "SageMaker API reference, Channel ChannelName (botocore's sagemaker model: max 64, pattern "
    "[A-Za-z0-9\\.\\-_]+)"};

const NameRule kSageMakerInstanceGroupName = {
    "a SageMaker instance group name", ".+", 64, "any characters",
    "SageMaker API reference, InstanceGroup InstanceGroupName (botocore's sagemaker model: max 64, "
    "pattern .+)"};

const std::vector<const NameRule*>& name_rules() {
  static const std::vector<const NameRule*> rules = {&kKubernetesNamespace,
                                                     &kPyTorchJobName,
                                                     &kKubernetesService,
                                                     &kSageMakerTrainingJob,
                                                     &kBatchJobDefinition,
                                                     &kLabelKeyPrefix,
                                                     &kLabelKeyName,
                                                     &kLabelValue,
                                                     &kServiceAccountName,
                                                     &kSageMakerChannelName,
                                                     &kSageMakerInstanceGroupName};
  return rules;
}

}  // namespace platform_limits

Status check_name(const NameRule& rule, const std::string& field, const std::string& value) {
  const std::regex pattern{std::string(rule.pattern)};
  if (value.size() <= rule.max_length && std::regex_match(value, pattern)) return ok_status();
  return Error{ErrorKind::kConfig,
               field + ": " + nlohmann::json(value).dump() + " (" + std::to_string(value.size()) +
                   " characters) is not " + std::string(rule.what) + ": expected " +
                   std::string(rule.expected) + ", at most " + std::to_string(rule.max_length) +
                   " characters (" + std::string(rule.source) + ")"};
}

Status check_label(const std::string& field, const std::string& key, const std::string& value) {
  using namespace platform_limits;
  const auto slash = key.find('/');
  if (slash != std::string::npos)
    if (auto s = check_name(kLabelKeyPrefix, field + " (key)", key.substr(0, slash)); !s) return s;
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  if (auto s = check_name(kLabelKeyName, field + " (key)", name); !s) return s;
  return check_name(kLabelValue, field, value);
}

}  // namespace tv
