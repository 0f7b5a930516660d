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
                                        const std::string& mode = "latest") {
  return find_resume_checkpoint(ResumeRequest{kRoot, format, mode}, fs);
}

inline std::string path_of(const std::optional<Checkpoint>& c) { return c ? c->path : "<none>"; }

}  // namespace tv::testing
