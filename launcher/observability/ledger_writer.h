// LedgerWriter: the job's ledger file (LedgerFile) written off the event loop. The ledger lives
// in the checkpoint directory, on a network file system whose renames take seconds under load
// (and never end when an NFS server is gone): node 0's loop, which also serves the coordinator,
// must never wait for one (docs/architecture.md, "No file-system call on the loop"). One thread
// of its own writes, in order; a write asked for while one runs waits, and only the newest
// record is written then. The loop reads what the last write read back (prior(), marks()): a
// copy, never the file. At the end, finish() waits for the last record at most a deadline; a
// thread still in a write then is left behind, said once, and ends with the process.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "launcher/observability/ledger_file.h"

namespace tv {

// How long the end of a run waits for the ledger's last write: a run stopped by a signal must end
// within its grace period whatever the file system does, so it waits only a little.
inline constexpr std::chrono::milliseconds kLedgerExitDeadline{10000};
inline constexpr std::chrono::milliseconds kLedgerStopDeadline{500};

class LedgerWriter {
 public:
  explicit LedgerWriter(LedgerFile file);  // opened (read) already
  ~LedgerWriter();                         // waits for nothing
  LedgerWriter(const LedgerWriter&) = delete;
  LedgerWriter& operator=(const LedgerWriter&) = delete;

  const std::string& path() const { return path_; }
  int index() const;     // this container's, as the last write left it (another may have taken it)
  Ledger prior() const;  // the other containers, as the last write read them
  std::vector<PoisonMark> marks() const;  // theirs and this container's
  void mark(PoisonMark m);                // in every write from the next one on
  void write(ContainerRecord current);    // queued; returns at once
  // The last record: written, waited for at most `deadline`. False when it was not over by then
  // (the thread is left behind, with a warning naming the file and the deadline).
  bool finish(ContainerRecord current, std::chrono::milliseconds deadline);
  // Nothing queued and nothing being written, waited for at most `deadline` (what the loop asked
  // for is on disk): false when a write is still under way then.
  bool wait_idle(std::chrono::milliseconds deadline) const;

 private:
  struct Shared;
  static void run(const std::shared_ptr<Shared>& s);
  std::string path_;
  std::shared_ptr<Shared> s_;
};

}  // namespace tv
