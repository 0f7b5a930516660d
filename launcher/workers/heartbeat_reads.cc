#include "launcher/workers/heartbeat_reads.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace tv {

void HeartbeatReads::read(const std::vector<std::shared_ptr<WorkerProcess>>& workers) {
  if (call_.pending() || workers.empty()) return;
  std::vector<std::weak_ptr<WorkerProcess>> whose;
  std::vector<std::string> paths;
  for (const auto& w : workers) {
    if (w->id().heartbeat_file.empty()) continue;
    whose.push_back(w);
    paths.push_back(w->id().heartbeat_file);
  }
  if (paths.empty()) return;
  const FileSystem* fs = &fs_;
  call_ = off_loop_.run(
      io_, [fs, whose = std::move(whose), paths = std::move(paths)]() -> std::function<void()> {
        // Off the loop: only the paths (copies) and the file system; the workers on the loop.
        std::vector<std::optional<std::int64_t>> mtimes;
        for (const auto& p : paths) mtimes.push_back(fs->modified_ns(p));
        return [whose, mtimes = std::move(mtimes)] {
          for (std::size_t i = 0; i < whose.size(); ++i)
            if (auto w = whose[i].lock()) w->heartbeat_read(mtimes[i]);
        };
      });
}

}  // namespace tv
