#include "common/instance_facts.h"

#include <array>

namespace tv {
namespace {

// AWS's instance type pages (accelerated computing: G5, G6, G6e, G7e, P4, P5, P6), Dec 2025.
// memory_gib is the nominal memory; Batch and Kubernetes see somewhat less (agent reservations).
constexpr std::array kFacts = {
    // g5: NVIDIA A10G (Ampere, RT cores)
    InstanceFacts{"g5.xlarge", 1, "A10G", true, 0, 4, 16},
    InstanceFacts{"g5.2xlarge", 1, "A10G", true, 0, 8, 32},
    InstanceFacts{"g5.4xlarge", 1, "A10G", true, 0, 16, 64},
    InstanceFacts{"g5.8xlarge", 1, "A10G", true, 1, 32, 128},
    InstanceFacts{"g5.12xlarge", 4, "A10G", true, 1, 48, 192},
    InstanceFacts{"g5.16xlarge", 1, "A10G", true, 1, 64, 256},
    InstanceFacts{"g5.24xlarge", 4, "A10G", true, 1, 96, 384},
    InstanceFacts{"g5.48xlarge", 8, "A10G", true, 1, 192, 768},
    // g6: NVIDIA L4 (Ada, RT cores)
    InstanceFacts{"g6.xlarge", 1, "L4", true, 0, 4, 16},
    InstanceFacts{"g6.2xlarge", 1, "L4", true, 0, 8, 32},
    InstanceFacts{"g6.4xlarge", 1, "L4", true, 0, 16, 64},
    InstanceFacts{"g6.8xlarge", 1, "L4", true, 1, 32, 128},
    InstanceFacts{"g6.12xlarge", 4, "L4", true, 1, 48, 192},
    InstanceFacts{"g6.16xlarge", 1, "L4", true, 1, 64, 256},
    InstanceFacts{"g6.24xlarge", 4, "L4", true, 1, 96, 384},
    InstanceFacts{"g6.48xlarge", 8, "L4", true, 1, 192, 768},
    // g6e: NVIDIA L40S (Ada, RT cores)
    InstanceFacts{"g6e.xlarge", 1, "L40S", true, 0, 4, 32},
    InstanceFacts{"g6e.2xlarge", 1, "L40S", true, 0, 8, 64},
    InstanceFacts{"g6e.4xlarge", 1, "L40S", true, 0, 16, 128},
    InstanceFacts{"g6e.8xlarge", 1, "L40S", true, 1, 32, 256},
    InstanceFacts{"g6e.12xlarge", 4, "L40S", true, 1, 48, 384},
    InstanceFacts{"g6e.16xlarge", 1, "L40S", true, 1, 64, 512},
    InstanceFacts{"g6e.24xlarge", 4, "L40S", true, 2, 96, 768},
    InstanceFacts{"g6e.48xlarge", 8, "L40S", true, 4, 192, 1536},
    // g7e: NVIDIA RTX PRO 6000 Blackwell Server Edition (RT cores)
    InstanceFacts{"g7e.2xlarge", 1, "RTX PRO 6000", true, 0, 8, 64},
    InstanceFacts{"g7e.4xlarge", 1, "RTX PRO 6000", true, 0, 16, 128},
    InstanceFacts{"g7e.8xlarge", 1, "RTX PRO 6000", true, 1, 32, 256},
    InstanceFacts{"g7e.12xlarge", 2, "RTX PRO 6000", true, 1, 48, 512},
    InstanceFacts{"g7e.24xlarge", 4, "RTX PRO 6000", true, 2, 96, 1024},
    InstanceFacts{"g7e.48xlarge", 8, "RTX PRO 6000", true, 4, 192, 2048},
    // P family: data-centre GPUs without RT cores
    InstanceFacts{"p4d.24xlarge", 8, "A100 40GB", false, 4, 96, 1152},
    InstanceFacts{"p4de.24xlarge", 8, "A100 80GB", false, 4, 96, 1152},
    InstanceFacts{"p5.48xlarge", 8, "H100", false, 32, 192, 2048},
    InstanceFacts{"p5e.48xlarge", 8, "H200", false, 32, 192, 2048},
    InstanceFacts{"p5en.48xlarge", 8, "H200", false, 16, 192, 2048},
    InstanceFacts{"p6-b200.48xlarge", 8, "B200", false, 8, 192, 2048},
};

}  // namespace

std::string_view without_ml_prefix(std::string_view type) {
  return type.starts_with("ml.") ? type.substr(3) : type;
}

std::optional<InstanceFacts> instance_facts(std::string_view type) {
  const std::string_view bare = without_ml_prefix(type);
  for (const InstanceFacts& f : kFacts)
    if (f.type == bare) return f;
  return std::nullopt;
}

}  // namespace tv
