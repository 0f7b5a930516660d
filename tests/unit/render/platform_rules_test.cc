// render against each platform's own accounting: Kubeflow's backoffLimit as the operator counts it,
// the documented limits of each API (render/platform_limits.h), what timeout_s becomes per target,
// HyperPod's auto-resume namespaces. tests/integration/test_render_platform_rules.py applies the
// same rules to the real binary's output.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/exit_codes.h"
#include "render/render.h"

namespace tv {
namespace {

using nlohmann::json;

json job(int nodes) {
  return {{"name", "ppo"},      {"image", "img:1"},        {"nodes", nodes},
          {"gpus_per_node", 8}, {"command", {"train.py"}}, {"kubeflow", {{"max_retry", 3}}}};
}

Result<Rendered> render(const json& doc, const std::string& target, RenderOptions o = {}) {
  auto c = parse_job_config(doc.dump(), "job.json");
  if (!c) return c.error();
  return render_job(*c, target, o);
}

json rendered(const json& doc, const std::string& target) {
  auto r = render(doc, target);
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().message);
  return r ? json::parse(r->text) : json{};
}

// PastBackoffLimit (kubeflow/training-operator pkg/core/job.go): the restarts of every running
// pod's containers, summed, against the limit (`result >= BackoffLimit`). One whole-job retry
// restarts every node's container once.
TEST(KubeflowBackoffLimit, EveryNodeRestartsOncePerWholeJobRetry) {
  for (int nodes : {1, 2, 4, 16}) {
    const int limit = rendered(job(nodes), "kubeflow")["spec"]["runPolicy"]["backoffLimit"];
    EXPECT_EQ(limit, backoff_limit(nodes, 3));
    EXPECT_LT(nodes * 3, limit) << nodes << " nodes: the third retry is still allowed";
    EXPECT_GE(nodes * 4, limit) << nodes << " nodes: the fourth fails the job";
  }
  EXPECT_EQ(backoff_limit(4, 0), 4);  // no retry: the first restarts fail the job
}

}  // namespace
}  // namespace tv
