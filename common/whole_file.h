// write_whole_file: how trainvisor writes a file that someone reads whole (the failure file, the
// termination log, the summary file, `render --output`), often into a directory other users can
// write too (a team's FSx/EFS share), while trainvisor runs as root. docs/supervision.md, "Files
// trainvisor creates", states the rules this implements:
//
// - a new file is written under an unpredictable temporary name in the target's directory
//   (openat with O_CREAT | O_EXCL | O_NOFOLLOW: a planted link or FIFO there is never opened), then
//   renamed into place (or, with only_if_absent, linked: never replacing a reason written since);
// - an existing regular file is replaced the same way; where rename cannot replace it (EBUSY: a
//   bind mount, Kubernetes' /dev/termination-log) it is written in place, opened with O_NOFOLLOW,
//   and only when it has no other hard link;
// - a symbolic link at the path is never followed: refused;
// - a character device (/dev/termination-log as a device, /dev/null) is written in place;
//   /dev/stdout and /dev/stderr (and /dev/fd/1|2, /proc/self/fd/1|2) go through trainvisor's own
//   output sinks, whatever they are (a pipe, a terminal, a file), so they are never replaced;
// - a FIFO or socket is refused; every open is O_NONBLOCK: nothing here waits.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tv {

struct WholeFileOptions {
  bool only_if_absent = false;  // keep an existing file (SageMaker keeps the first reason)
  mode_t mode = 0644;
};

// true: written; false: skipped because it exists and only_if_absent. An Error's message is
// "<path>: not written (<reason>)", the reason an errno text or what the path is instead.
Result<bool> write_whole_file(const std::string& path, std::string_view body,
                              const WholeFileOptions& options = {});

// 1 or 2 when `path` names trainvisor's own stdout or stderr (/dev/stdout, /dev/fd/2 ...), else 0.
int standard_stream_of(const std::string& path);

}  // namespace tv
