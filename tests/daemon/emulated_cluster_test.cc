// A live cluster of 16,384 emulated nodes (issue 33's emulated execution): the real controller,
// control tree and store, 16 agents that emulate their tasks (daemon/emulated_tasks.h). Full-
// machine jobs and small jobs run side by side; every job must end CD at attempt 1 on as many
// nodes as it asked for, and the store's event log, replayed, must never give a node to two jobs
// at once (bench/event_log_audit.h).
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "bench/event_log_audit.h"
#include "core/id_ranges.h"
#include "live_cluster.h"
#include "store/state_store.h"

namespace trellis {
namespace {

using testing::eventually;
using testing::LiveCluster;

TEST(EmulatedClusterTest, SixteenThousandNodesRunFullMachineAndSmallJobsWithoutSharingANode) {
  testing::ExclusiveHostLock exclusive;  // 16 agents and 16,384 nodes' exits at once
  LiveCluster cluster("--machine torus:32x32x16 --agents 16 --emulate");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  EXPECT_NE(testing::read_file(cluster.dir() / "agent-0.log").find("tasks are emulated"),
            std::string::npos);

  // Requested nodes by job id, in submission order: a full machine, eight jobs that share it,
  // small ones that fill in, and the full machine again. The eight last 10 s so that they all
  // run at once however slowly the submissions come (under ASan, one `sleep 1` each ended
  // before the last was submitted: 6 ran at once, not 8).
  std::map<int64_t, int> asked;
  auto submit = [&](int nodes, const std::string& command) {
    int64_t id = cluster.submit("-N " + std::to_string(nodes) + " -o /dev/null -- " + command);
    ASSERT_GT(id, 0) << cluster.trellis("queue").output;
    asked[id] = nodes;
  };
  submit(16384, "sleep 1");
  for (int k = 0; k < 8; ++k) submit(2048, "sleep 10");
  for (int k = 0; k < 8; ++k) submit(64, "sleep 0.5");
  for (int k = 0; k < 4; ++k) submit(1, "/bin/true");
  submit(16384, "true");

  auto store = open_store("sqlite:" + (cluster.dir() / "state.db"));
  ASSERT_TRUE(store) << store.error().message;
  auto all_final = [&] {
    Result<std::vector<StoredJob>> jobs = (*store)->list_jobs({});
    return jobs && jobs->size() == asked.size() &&
           std::all_of(jobs->begin(), jobs->end(), [](const StoredJob& j) {
             return j.state != JobState::kPending && j.state != JobState::kRunning &&
                    j.state != JobState::kCompleting && j.state != JobState::kSuspended;
           });
  };
  ASSERT_TRUE(eventually(all_final, std::chrono::seconds(90))) << cluster.trellis("queue").output;

  Result<std::vector<StoredJob>> jobs = (*store)->list_jobs({});
  ASSERT_TRUE(jobs) << jobs.error().message;
  for (const StoredJob& job : *jobs) {
    SCOPED_TRACE("job " + std::to_string(job.id));
    EXPECT_EQ(job.state, JobState::kCompleted) << job.reason;
    EXPECT_EQ(job.attempt, 1);
    EXPECT_EQ(static_cast<int>(job.nodes.size()), asked[job.id]);
    EXPECT_EQ(job.exit_code, 0);
    EXPECT_EQ(job.signal, 0);
  }
  // The emulated `sleep 1` lasted its second (times are recorded in seconds, as doubles).
  Result<StoredJob> first = (*store)->job(asked.begin()->first);
  ASSERT_TRUE(first);
  EXPECT_GE(first->end_time - first->start_time, 0.9);

  // The log, replayed: no node held by two jobs, every job started once; and the start events
  // name as many nodes as each job asked for. Some jobs really ran side by side (else the check
  // of sharing would prove nothing).
  Result<bench::EventLogAudit> audit = bench::audit_event_log(**store);
  ASSERT_TRUE(audit) << audit.error().message;
  EXPECT_TRUE(audit->clean()) << (audit->problems.empty() ? "" : audit->problems.front());
  EXPECT_EQ(audit->starts, static_cast<int64_t>(asked.size()));
  int running = 0, most_running = 0;
  int64_t after = 0;
  for (;;) {
    Result<std::vector<StoredEvent>> events = (*store)->events(after, 10000);
    ASSERT_TRUE(events) << events.error().message;
    if (events->empty()) break;
    for (const StoredEvent& e : *events) {
      after = e.seq;
      if (e.kind == "start") {
        // "attempt A on K nodes: 0-2047,..."
        Result<std::vector<int>> ids = parse_id_ranges(e.detail.substr(e.detail.find(": ") + 2));
        ASSERT_TRUE(ids) << e.detail;
        EXPECT_EQ(static_cast<int>(ids->size()), asked[e.job]) << "job " << e.job;
        most_running = std::max(most_running, ++running);
      } else if (e.kind == "end") {
        --running;
      }
    }
  }
  EXPECT_GE(most_running, 8);
}

}  // namespace
}  // namespace trellis
