// The job's ledger on disk (launcher/observability/ledger.h has what it holds): one small JSON
// file per job in the checkpoint dir, the storage that outlives the container (FSx, EFS,
// /opt/ml/checkpoints, which SageMaker syncs to S3), written by node 0 only:
//   <checkpoint dir>/.trainvisor-ledger-<16 hex digits: FNV-1a of the job id>.json
// so co-tenants' jobs in one directory never share a file. Every write replaces it whole through
// common/whole_file.h (a temporary name, O_EXCL | O_NOFOLLOW, rename: never half written, never
// through a link). Read with O_NOFOLLOW and a 1 MiB cap. A file there that is not this job's
// readable ledger (not JSON, another job's id, a link, too large) is renamed to `<name>.corrupt`
// (replacing an older one) with one warning, and the job's account starts again from this
// container. Opened (read once) as the run starts; written only on LedgerWriter's own thread
// (ledger_writer.h), never on the supervisor's event loop: a few KiB per write, every
// --ledger-interval seconds and at exit, each read-modify-write under the checkpoint dir's flock
// (at most 2 s, then unlocked with a warning).
#pragma once

#include <string>

#include "launcher/observability/ledger.h"

namespace tv {

inline constexpr std::size_t kLedgerFileCap = 1024 * 1024;  // what is read of a ledger file

class LedgerFile {
 public:
  // Reads the job's ledger in `dir` (none yet: this container is the job's first).
  static LedgerFile open(const std::string& dir, const std::string& job_id);

  const std::string& path() const { return path_; }
  // The job's other containers (those before this one, and any that wrote since).
  const Ledger& prior() const { return prior_; }
  int index() const { return index_; }
  // Writes the other containers' records and `current` (this container's); the others are read
  // again first, so a container of the job that overlaps this one (a replacement started during
  // the old one's grace period) is not overwritten. The read and the write hold the directory's
  // flock(2) (bounded wait), and until this container's first record is written an index another
  // container wrote first is given up for the next free one (`current.index` is replaced by
  // index()): containers started together keep one record each. The first failure is logged
  // once.
  void write(const ContainerRecord& current);
  // A checkpoint this container found poisoned: kept with the other containers' marks at every
  // write from now on (the caller writes at once).
  void mark(PoisonMark m) { add_mark(own_marks_, std::move(m)); }
  // Every mark: the other containers' (as last read) and this one's.
  std::vector<PoisonMark> marks() const;

 private:
  LedgerFile(std::string path, Ledger prior);
  void refresh();
  std::string path_;
  Ledger prior_;
  std::vector<PoisonMark> own_marks_;
  int index_ = 0;
  bool claimed_ = false;  // a record with index_ was written: a record there now is this one's
  bool warned_ = false;
  bool warned_lock_ = false;
};

// The marks of the job's ledger in `dir`, read only (the other nodes of a job: node 0 keeps the
// file, they only step over what it marks); none when there is no readable ledger of this job
// (nothing is set aside here).
std::vector<PoisonMark> read_ledger_marks(const std::string& dir, const std::string& job_id);

// The file name for a job id (tests look for it).
std::string ledger_file_name(const std::string& job_id);

}  // namespace tv
