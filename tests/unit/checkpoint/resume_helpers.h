// What the discovery and layout tests share: the fake tree's root and a one-line resume lookup.
#pragma once

#include <optional>
#include <string>

#include "checkpoint/resume.h"
#include "fake_checkpoint_fs.h"
#include "pickle_writer.h"

namespace tv::testing {

inline const std::string kRoot = "/ckpt";
inline constexpr std::int64_t kS = FakeCheckpointFs::kSecond;

inline std::optional<Checkpoint> latest(FakeCheckpointFs& fs, const std::string& format = "auto",
                                        Pick mode = Pick::kLatest) {
  return find_resume_checkpoint(ResumeRequest{kRoot, format, mode}, fs);
}

// A one-shard DCP directory written at `t` (its directories made then too), with .metadata unless
// `meta` is false.
inline void dcp(FakeCheckpointFs& fs, const std::string& dir, std::int64_t t, bool meta = true) {
  const std::int64_t now = fs.now();
  fs.set_now(t);
  fs.add_file(dir + "/__0_0.distcp", "0123456789", t);
  if (meta) fs.add_file(dir + "/.metadata", make_dcp_metadata({{"__0_0.distcp", 0, 10}}), t);
  fs.set_now(now);
}

inline std::string path_of(const std::optional<Checkpoint>& c) { return c ? c->path : "<none>"; }

}  // namespace tv::testing
