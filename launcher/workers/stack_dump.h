// What a worker's stacks file says (launcher/workers/worker_hook.py writes it): one header
// line per registration, "# trainvisor stacks: pid 123 main thread 0x00007f...", then whatever
// faulthandler appended on each stacks signal: for every thread "Thread 0x... (most recent call
// first):" ("Current thread" for the one that took the signal) and its frames,
// `  File "/x/train.py", line 5 in step`. Pure text in, facts out.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tv {

struct StacksHeader {
  long pid = 0;
  std::string main_thread;  // "0x00007f...", as faulthandler prints thread ids
};

// The last registration in the file; nullopt when there is none (the hook did not run).
std::optional<StacksHeader> last_stacks_header(std::string_view text);

// The innermost frame of `thread` in the last dump of `text` (a dump: what one signal appended),
// as "step (/x/train.py:5)"; nullopt when that thread is not in it.
std::optional<std::string> innermost_frame(std::string_view text, const std::string& thread);

// The innermost frame of `thread` that is the user's: the first, from the innermost outward,
// whose file is outside the interpreter's library (`.../lib/python3.N/`, `<frozen ...>`), any
// `site-packages` or `dist-packages` directory and trainvisor's own hook; nullopt when every
// frame is theirs or the thread is not in the last dump. For a CUDA hang: the training script's
// `train_step (/x/train.py:12)`, not torch's `synchronize (.../torch/cuda/__init__.py:1162)`.
std::optional<std::string> innermost_user_frame(std::string_view text, const std::string& thread);

// Whether a frame's file (as faulthandler prints it) is the interpreter's or a package's.
bool library_file(std::string_view file);

}  // namespace tv
