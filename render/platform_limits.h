// The documented limits of each platform's API that render checks before it writes a spec: data,
// one row per rule, each with the page or source file it is written in (render/platform_limits.cc;
// docs/render.md, "Each platform's limits"). botocore's models carry some of them (SageMaker's
// TrainingJobName pattern) but its validator checks minimums only, and some only in prose (Batch's
// "up to 5" evaluateOnExit objects): without these rows a spec that every offline check passes is
// refused by the API. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tv {

struct NameRule {
  std::string_view what;      // "a SageMaker training job name"
  std::string_view pattern;   // ECMAScript, matched against the whole value
  std::size_t max_length;     // characters
  std::string_view expected;  // the pattern in words, for the error
  std::string_view source;    // where the rule is written
};

namespace platform_limits {

extern const NameRule kKubernetesNamespace;  // RFC 1123 label
extern const NameRule kPyTorchJobName;       // RFC 1035 label (the operator's webhook)
extern const NameRule kKubernetesService;    // RFC 1035 label: the operator's <job>-worker-<i>
extern const NameRule kSageMakerTrainingJob;
extern const NameRule kBatchJobDefinition;
// Kubernetes labels: a key is [prefix/]name, prefix a DNS subdomain, name a qualified name; a
// value is empty or a qualified name (apimachinery pkg/util/validation IsQualifiedName,
// IsValidLabelValue).
extern const NameRule kLabelKeyPrefix;
extern const NameRule kLabelKeyName;
extern const NameRule kLabelValue;
extern const NameRule kServiceAccountName;  // a DNS subdomain
extern const NameRule kSageMakerChannelName;
extern const NameRule kSageMakerInstanceGroupName;

// CreateTrainingJob InputDataConfig "Array Members: Maximum number of 20 items"; ResourceConfig
// InstanceGroups "Maximum number of 5 items" (botocore's sagemaker model: max 20, max 5).
inline constexpr std::size_t kSageMakerChannelsMax = 20;
inline constexpr std::size_t kSageMakerInstanceGroupsMax = 5;

// RetryStrategy.evaluateOnExit: "Array of up to 5 objects" (AWS Batch API reference, RetryStrategy;
// botocore's batch model says it in the member's documentation only, with no "max").
inline constexpr std::size_t kBatchEvaluateOnExitMax = 5;

// Every row, for the tests and docs/render.md.
const std::vector<const NameRule*>& name_rules();

}  // namespace platform_limits

// 78 naming `field`, the value, the rule in words, its length limit and its source.
Status check_name(const NameRule& rule, const std::string& field, const std::string& value);

// A Kubernetes label, key and value, by the rules above (78 naming `field` and the rule).
Status check_label(const std::string& field, const std::string& key, const std::string& value);

}  // namespace tv
