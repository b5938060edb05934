// QOS on a live cluster, from where a site's users stand (core/qos.h): a QOS's Priority puts its
// jobs ahead of the queue, MaxJobsPerUser keeps one user's jobs in it to one at a time (its
// waiting jobs say so), MaxSubmitJobsPerUser refuses the next submission with the reason, a QOS
// the user may not use or that does not exist is refused by name, MaxWall (the QOS's, else the
// account's) gives a job without a time limit its own and (with DenyOnLimit) refuses a longer one;
// all across a controller killed with -9, on SQLite and on PostgreSQL with two controllers. The
// second user is `nobody`.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "accounts_live_support.h"

namespace trellis {
namespace {

using test::CommandRun;
using testing::ChildProcess;
using testing::eventually;
using testing::LiveCluster;

namespace fs = std::filesystem;

// A Slurm command against `cluster`; `as` runs it as that user. stdout and stderr.
test::CommandRun qos_slurm(const LiveCluster& cluster, const std::string& command,
                           const std::string& as = "") {
  return testing::slurm_as(cluster, command, as);
}

// The most jobs of `user` running at once, by their own timestamps (an end at the instant of a
// start does not overlap it).
int most_at_once(const v1::ListJobsReply& reply, const std::string& user) {
  std::vector<std::pair<double, int>> edges;
  for (const v1::JobInfo& j : reply.jobs()) {
    if (j.user() != user || j.start_time() <= 0) continue;
    edges.push_back({j.start_time(), 1});
    edges.push_back({j.end_time() > 0 ? j.end_time() : 1e300, -1});
  }
  std::sort(edges.begin(), edges.end());
  int held = 0, most = 0;
  for (const auto& [at, delta] : edges) most = std::max(most, held += delta);
  return most;
}

int64_t job_id_of(const CommandRun& run) {
  return std::stoll(run.output);
}

std::string recorded_qos(const std::string& name) {
  return test::read_text(fs::path(TRELLIS_SOURCE_DIR) / "tests/golden/slurm/recorded-qos" / name);
}

// What Slurm 22.05 printed for the same QOS commands on the same tree
// (tests/golden/slurm/recorded-qos/, see its README), byte for byte: the changes' messages, the
// QOS listing, the associations' QOS lists (inherited, added to, copied down from an account)
// and sprio's weights with PriorityWeightQOS=1000.
TEST(SacctmgrQosGoldenTest, QosChangesAndListingsPrintAsSlurmDoes) {
  LiveCluster cluster("--machine flat:4 --emulate --priority-weight-qos 1000");
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  auto sacctmgr = [&](const std::string& words) {
    return qos_slurm(cluster, "sacctmgr " + words + " 2>/dev/null");
  };
  for (const std::string& change :
       {"add account science Description=science Organization=sci",
        "add account physics Parent=science Fairshare=40",
        "add account chem Parent=science Fairshare=60",
        "add user alice Account=physics,chem DefaultAccount=chem",
        "add user bob Account=physics Fairshare=2",
        "modify account physics set GrpTRES=node=2 MaxSubmitJobs=10",
        "modify user alice where account=physics set Fairshare=7", "add user root Account=root"})
    ASSERT_EQ(sacctmgr("-i " + change).status, 0) << change;
  const std::vector<std::pair<std::string, std::string>> steps = {
      {"-i add qos high", "01_add_qos_high.txt"},
      {"-i add qos standby Priority=0 Description=preemptible",
       "02_add_qos_standby_priority0_description.txt"},
      {"-i modify qos high set Priority=100 MaxJobsPerUser=2 MaxSubmitJobsPerUser=3 "
       "MaxTRESPerUser=node=2 GrpTRES=node=4 MaxWall=01:00:00 UsageFactor=2.0 Flags=DenyOnLimit",
       "03_modify_qos_high_limits.txt"},
  };
  for (const auto& [words, file] : steps) {
    CommandRun r = sacctmgr(words);
    EXPECT_EQ(r.status, 0) << words << "\n" << r.output;
    EXPECT_EQ(r.output, recorded_qos(file)) << words;
  }
  // (Slurm's run also set GraceTime and PreemptMode, which Trellis refuses: preemption is not
  // built; the listing below leaves those columns out.)
  ASSERT_EQ(sacctmgr("-i modify qos standby set UsageFactor=0.5").status, 0);
  EXPECT_EQ(sacctmgr("list qos format=Name,Priority,MaxJobsPU,MaxSubmitPU,MaxTRESPU,GrpTRES,"
                     "MaxWall,UsageFactor,Flags")
                .output,
            recorded_qos("06e_list_qos_format.txt"));
  const std::vector<std::pair<std::string, std::string>> lists = {
      {"-i modify user alice set qos+=high", "08a_modify_user_alice_qos_plus_high.txt"},
      {"-i modify user alice set defaultqos=high", "08b_modify_user_alice_defaultqos_high.txt"},
      {"-i modify user bob set qos=normal,standby", "08c_modify_user_bob_qos_normal_standby.txt"},
      {"-i modify account physics set qos+=standby",
       "08d_modify_account_physics_qos_plus_standby.txt"},
      {"list assoc", "08e_list_assoc_default.txt"},
      {"-P list assoc", "08f_list_assoc_-P.txt"},
      {"-P list assoc format=Account,User,QOS,DefaultQOS",
       "08h2_list_assoc_-P_format_account_user_qos_defaultqos.txt"},
      {"list assoc format=Account,User,QOS,DefaultQOS",
       "08g2_list_assoc_format_account_user_qos_defaultqos.txt"},
  };
  for (const auto& [words, file] : lists) {
    CommandRun r = sacctmgr(words);
    EXPECT_EQ(r.status, 0) << words << "\n" << r.output;
    EXPECT_EQ(r.output, recorded_qos(file)) << words;
  }
  EXPECT_EQ(qos_slurm(cluster, "sprio -w").output, recorded_qos("09l_sprio_-w.txt"));
  // Slurm's field is DefaultQOS; DefQOS is not one.
  EXPECT_NE(sacctmgr("list assoc format=Account,DefQOS").status, 0);
}

using QosLiveTest = testing::EnginesLiveTest;

TEST_P(QosLiveTest, HighQosJobsGoFirstOneAtATimeAndTheFourthIsRefused) {
  if (skipped()) return;
  LiveCluster cluster("--machine flat:4 --emulate --priority-weight-qos 100000" + store_option_);
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  for (const std::string& change :
       {"add account alpha", "add user root Account=alpha", "add user nobody Account=alpha",
        "add qos high Priority=100", "modify qos high set MaxJobsPerUser=1 MaxSubmitJobsPerUser=3",
        "modify user nobody set qos+=high"})
    ASSERT_EQ(qos_slurm(cluster, "sacctmgr -i " + change).status, 0) << change;
  // root's forty jobs of the normal QOS fill the four nodes, four at a time.
  CommandRun forty =
      qos_slurm(cluster, "sbatch --parsable --array=1-40 -o /dev/null --wrap 'sleep 2'");
  ASSERT_EQ(forty.status, 0) << forty.output;
  // nobody's three jobs in high are accepted; the fourth is over MaxSubmitJobsPerUser.
  std::vector<int64_t> high;
  for (int i = 0; i < 3; ++i) {
    CommandRun run =
        qos_slurm(cluster, "sbatch --parsable --qos=high -o /dev/null --wrap 'sleep 2'", "nobody");
    ASSERT_EQ(run.status, 0) << run.output;
    high.push_back(job_id_of(run));
  }
  CommandRun fourth =
      qos_slurm(cluster, "sbatch --qos=high -o /dev/null --wrap 'sleep 2'", "nobody");
  EXPECT_EQ(fourth.status, 1) << fourth.output;
  EXPECT_NE(fourth.output.find("Job violates accounting/QOS policy (job submit limit, user's size "
                               "and/or time limits)"),
            std::string::npos)
      << fourth.output;
  EXPECT_NE(fourth.output.find("user nobody has 3 job(s) pending or running in qos high, and its "
                               "MaxSubmitJobsPerUser is 3 (QOSMaxSubmitJobPerUserLimit)"),
            std::string::npos)
      << fourth.output;
  // root may not use high; nobody may not use a QOS that does not exist.
  CommandRun not_allowed = qos_slurm(cluster, "sbatch --qos=high -o /dev/null --wrap true");
  EXPECT_EQ(not_allowed.status, 1);
  EXPECT_NE(not_allowed.output.find("Invalid qos specification: user root in account alpha may "
                                    "not use qos high (its QOS: normal)"),
            std::string::npos)
      << not_allowed.output;
  CommandRun unknown = qos_slurm(cluster, "sbatch --qos=nosuch -o /dev/null --wrap true", "nobody");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.output.find("Invalid qos specification: qos nosuch does not exist"),
            std::string::npos)
      << unknown.output;
  // While one of nobody's high jobs runs, the next waits for the limit and says so.
  ASSERT_TRUE(eventually([&] {
    return qos_slurm(cluster, "squeue -h -u nobody -t PD -o %R")
               .output.find("(QOSMaxJobsPerUserLimit)") != std::string::npos;
  })) << qos_slurm(cluster, "squeue").output;
  CommandRun shown = qos_slurm(cluster, "scontrol show job " + std::to_string(high.back()));
  EXPECT_NE(shown.output.find("QOS=high"), std::string::npos) << shown.output;

  // Killed -9 in the middle: the restarted controller reads the QOS and what runs from the store.
  std::unique_ptr<ChildProcess> restarted = kill_and_restart(cluster);
  ControllerClient client = cluster.client();
  ASSERT_TRUE(eventually(
      [&] {
        const v1::ListJobsReply jobs = testing::all_jobs(client);
        int ended = 0;
        for (const v1::JobInfo& j : jobs.jobs()) ended += j.user() == "nobody" && j.end_time() > 0;
        return ended == 3;
      },
      std::chrono::seconds(90)));
  const v1::ListJobsReply done = testing::all_jobs(client);
  EXPECT_EQ(most_at_once(done, "nobody"), 1);
  // The high jobs went ahead of root's queue: when the last of them started, most of root's
  // forty had not (in arrival order all forty would have gone first).
  double last_high_start = 0;
  for (const v1::JobInfo& j : done.jobs())
    if (j.user() == "nobody") last_high_start = std::max(last_high_start, j.start_time());
  int root_after = 0;
  for (const v1::JobInfo& j : done.jobs())
    if (j.user() == "root" && (j.start_time() == 0 || j.start_time() > last_high_start))
      ++root_after;
  EXPECT_GT(root_after, 15) << "root's jobs that started after nobody's last high job";
  // The QOS came back from the store as it was set.
  CommandRun listed =
      qos_slurm(cluster, "sacctmgr -n -P list qos format=Name,Priority,MaxJobsPU,MaxSubmitPU");
  EXPECT_EQ(listed.output, "normal|0||\nhigh|100|1|3\n");
}

TEST_P(QosLiveTest, MaxWallGivesATimeLimitAndDenyOnLimitRefusesALongerOne) {
  if (skipped()) return;
  LiveCluster cluster("--machine flat:4 --emulate" + store_option_);
  ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
  for (const std::string& change :
       {"add account alpha", "add user root Account=alpha", "add qos short",
        "modify qos short set MaxWall=00:01:00 MaxTRESPerUser=node=2",
        "modify user root set qos+=short"})
    ASSERT_EQ(qos_slurm(cluster, "sacctmgr -i " + change).status, 0) << change;
  ControllerClient client = cluster.client();
  auto time_limit_of = [&](int64_t id) {
    const v1::ListJobsReply reply =
        testing::all_jobs(client);  // (a temporary's jobs() would dangle)
    for (const v1::JobInfo& j : reply.jobs())
      if (j.id() == id) return j.spec().time_limit();
    return -1.0;
  };
  // No time asked: MaxWall's, the QOS's before the account's.
  ASSERT_EQ(qos_slurm(cluster, "sacctmgr -i modify account alpha set MaxWall=00:02:00").status, 0);
  CommandRun plain = qos_slurm(cluster, "sbatch --parsable --qos=short -o /dev/null --wrap true");
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_EQ(time_limit_of(job_id_of(plain)), 60);
  CommandRun normal = qos_slurm(cluster, "sbatch --parsable -o /dev/null --wrap true");
  ASSERT_EQ(normal.status, 0) << normal.output;
  EXPECT_EQ(time_limit_of(job_id_of(normal)), 120);
  // Longer than MaxWall without DenyOnLimit: accepted, and waits with the limit's reason.
  CommandRun longer =
      qos_slurm(cluster, "sbatch --parsable --qos=short -t 5 -o /dev/null --wrap 'sleep 1'");
  ASSERT_EQ(longer.status, 0) << longer.output;
  ASSERT_TRUE(eventually([&] {
    return qos_slurm(cluster, "squeue -h -j " + std::to_string(job_id_of(longer)) + " -o %R")
               .output.find("(QOSMaxWallDurationPerJobLimit)") != std::string::npos;
  })) << qos_slurm(cluster, "squeue").output;
  // With DenyOnLimit: refused at once, as is a job over MaxTRESPerUser on its own.
  ASSERT_EQ(qos_slurm(cluster, "sacctmgr -i modify qos short set Flags=DenyOnLimit").status, 0);
  std::unique_ptr<ChildProcess> restarted = kill_and_restart(cluster);
  ASSERT_TRUE(eventually([&] { return qos_slurm(cluster, "squeue -h").status == 0; }));
  CommandRun denied = qos_slurm(cluster, "sbatch --qos=short -t 5 -o /dev/null --wrap true");
  EXPECT_EQ(denied.status, 1) << denied.output;
  EXPECT_NE(denied.output.find("the time limit is longer than MaxWall=00:01:00 of qos short "
                               "(QOSMaxWallDurationPerJobLimit)"),
            std::string::npos)
      << denied.output;
  CommandRun wide = qos_slurm(cluster, "sbatch --qos=short -N 3 -o /dev/null --wrap true");
  EXPECT_EQ(wide.status, 1) << wide.output;
  EXPECT_NE(wide.output.find("the job asks for 3 nodes and MaxTRESPerUser of qos short is node=2 "
                             "(QOSMaxNodePerUserLimit)"),
            std::string::npos)
      << wide.output;
  // The job that waited is still there, still waiting for the same reason.
  EXPECT_NE(qos_slurm(cluster, "squeue -h -j " + std::to_string(job_id_of(longer)) + " -o %T")
                .output.find("PENDING"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Engines, QosLiveTest,
                         ::testing::Values(test::Engine::kSqlite, test::Engine::kPostgres),
                         test::engine_name);

}  // namespace
}  // namespace trellis
