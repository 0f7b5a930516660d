// CollectiveReports: this node's reports to the cluster (a failure, a Stopped) with the last
// collective each of its ranks entered (docs/supervision.md, "The culprit"). Before a report
// leaves, the flight-recorder dumps torch wrote for its ranks are read in a child Python
// (nccl_trace_summary.py --evidence, a SideQuery with a deadline: the loop and the signals go on;
// PID 1 never unpickles), and what they say is merged into the report's evidence
// (collective_evidence.h). Reports leave in the order they were asked: one whose dumps are still
// being read holds back those asked after it, so a node's Stopped never reaches the coordinator
// before its own root cause. A dump that cannot be read is one warning; the report leaves
// without it.
//
// Owns the dump-reading children (killed by drop_all or the destructor). Single-threaded: the
// Supervisor's io_context.
#pragma once

#include <boost/asio/io_context.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/environment.h"
#include "common/loop_time.h"
#include "launcher/job/cluster.h"
#include "launcher/workers/side_query.h"
#include "launcher/workers/spawner.h"

namespace tv {

class CollectiveReports {
 public:
  using Send = std::function<void(std::vector<RankEvidence>)>;
  struct Setup {
    std::string python;  // the workers' interpreter, which reads the dumps
    Environment env;     // the workers' base environment
    int node_rank = 0;   // a rank found only in a dump gets an entry of this node
  };

  CollectiveReports(boost::asio::io_context& io, LoopTime& time, Spawner& spawner, Setup setup);

  // Queues a report: `send` gets `ranks`, with the last collectives `dumps` give (none: as they
  // are), once every report asked before it has left.
  void add(int generation, const std::vector<std::string>& dumps, std::vector<RankEvidence> ranks,
           Send send);
  // The run is over: the children still reading are killed, the reports they held never leave.
  void drop_all();

 private:
  struct Pending {
    bool ready = false;  // its dumps read (or none to read)
    std::vector<RankEvidence> ranks;
    Send send;
  };
  void read_dumps(int generation, const std::vector<std::string>& dumps,
                  const std::shared_ptr<Pending>& report);
  void send_ready();

  boost::asio::io_context& io_;
  LoopTime& time_;
  Spawner& spawner_;
  Setup setup_;
  std::deque<std::shared_ptr<Pending>> queue_;  // in the order they were asked
  std::vector<std::unique_ptr<SideQuery>> readers_;
};

}  // namespace tv
