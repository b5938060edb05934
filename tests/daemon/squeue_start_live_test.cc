// squeue --start on a live cluster: the pending jobs with the start the scheduler's plan expects
// for each (conservative backfilling plans every one), soonest first, in Slurm's columns.
#include <gtest/gtest.h>

#include <sstream>

#include "accounts_live_support.h"

namespace trellis {
namespace {

using test::CommandRun;
using testing::eventually;
using testing::LiveCluster;

TEST(SqueueStartLiveTest, PendingJobsShowThePlannedStartSoonestFirst) {
  LiveCluster cluster("--machine flat:4 --emulate --policy conservative");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  auto submit = [&](const std::string& args) {
    CommandRun run = testing::slurm_as(cluster, "sbatch --parsable -o /dev/null " + args);
    EXPECT_EQ(run.status, 0) << args << ": " << run.output;
    return run.status == 0 ? std::stoll(run.output) : -1;
  };
  // The whole machine for a minute, then three that wait for it.
  const int64_t first = submit("-N 4 -t 1 --wrap 'sleep 300'");
  ControllerClient client = cluster.client();
  auto job = [&](int64_t id) {
    const v1::ListJobsReply reply = testing::all_jobs(client);
    for (const v1::JobInfo& j : reply.jobs())
      if (j.id() == id) return j;
    return v1::JobInfo();
  };
  ASSERT_TRUE(eventually([&] { return job(first).start_time() > 0; }));
  const int64_t two = submit("-N 2 -t 2 --wrap 'sleep 1'");
  const int64_t whole = submit("-N 4 -t 1 --wrap 'sleep 1'");
  const int64_t one = submit("-N 1 -t 1 --wrap 'sleep 1'");
  // Planned: two when the first ends; one beside it (backfilled); whole after two's 2 minutes.
  ASSERT_TRUE(eventually([&] {
    return job(two).expected_start() > 0 && job(whole).expected_start() > 0 &&
           job(one).expected_start() > 0;
  })) << testing::slurm_as(cluster, "squeue --start").output;
  const double first_start = job(first).start_time();
  EXPECT_NEAR(job(two).expected_start(), first_start + 60, 2);
  EXPECT_NEAR(job(one).expected_start(), first_start + 60, 2);
  EXPECT_NEAR(job(whole).expected_start(), first_start + 180, 2);

  CommandRun start = testing::slurm_as(cluster, "squeue --start");
  ASSERT_EQ(start.status, 0) << start.output;
  std::istringstream lines(start.output);
  std::string header;
  std::getline(lines, header);
  EXPECT_EQ(header,
            "             JOBID PARTITION     NAME     USER ST          START_TIME  NODES "
            "SCHEDNODES           NODELIST(REASON)");
  std::vector<int64_t> order;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    int64_t id = 0;
    std::string partition, name, user, state, when;
    fields >> id >> partition >> name >> user >> state >> when;
    EXPECT_EQ(state, "PD") << line;
    EXPECT_NE(when, "N/A") << line;
    order.push_back(id);
  }
  // Soonest first; the running job is not listed.
  EXPECT_EQ(order, (std::vector<int64_t>{two, one, whole})) << start.output;
}

}  // namespace
}  // namespace trellis
