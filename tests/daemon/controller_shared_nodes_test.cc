// A controller whose partition shares its nodes ([[partition]] shared = true): jobs of one core
// pack onto the nodes' cores, each start carries its grants to the agents and to the store, and
// no core is ever given to two jobs, across a restart of the controller (the grants are read
// back from the store) and as jobs end and others take their cores.
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "daemon/config.h"
#include "daemon/controller.h"
#include "daemon_test_support.h"
#include "store/state_store.h"

namespace trellis {
namespace {

constexpr const char* kSharedCluster =
    "[cluster]\nmachine = \"flat:2\"\nstore = \"sqlite:state.db\"\n[controller]\n"
    "policy = \"easy\"\n"
    "[[partition]]\nname = \"main\"\nshared = true\ndefault_mem_per_cpu = \"1G\"\n"
    "[[nodetype]]\nname = \"two\"\nresources = \"cores=2,mem=4G\"\n";

class ControllerSharedNodesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<ClusterConfig> parsed = parse_cluster_config(kSharedCluster, "t.toml");
    ASSERT_TRUE(parsed) << parsed.error().message;
    config_ = *parsed;
    config_.store = "sqlite:" + (dir_ / "state.db");
    config_.controller.heartbeat_misses = 1000;
    auto opened = open_store(config_.store);
    ASSERT_TRUE(opened) << opened.error().message;
    store_ = std::move(*opened);
    open(0);
  }
  void open(Seconds now) {
    controller_.reset();
    auto c = Controller::open(config_, *store_, agents_, now, "A");
    ASSERT_TRUE(c) << c.error().message;
    controller_ = std::move(*c);
    v1::RegisterRequest hello;
    hello.set_address("fake:1");
    hello.add_nodes("n0");
    hello.add_nodes("n1");
    ASSERT_TRUE(controller_->register_agent(hello, caller_, now));
  }
  JobId submit(const std::vector<std::pair<std::string, std::string>>& asks, Seconds now) {
    ResourceRequest request;
    for (const auto& [option, value] : asks)
      EXPECT_TRUE(apply_resource_option(option, value, request));
    v1::JobSpec spec;
    spec.set_nodes(1);
    spec.set_time_limit(1000);
    spec.add_argv("true");
    spec.set_cwd("/");
    spec.set_resources(encode_resource_request(request));
    Result<JobId> id = controller_->submit(spec, caller_, now);
    EXPECT_TRUE(id) << id.error().message;
    return id ? *id : -1;
  }
  void pass(Seconds now) {
    ASSERT_TRUE(controller_->tick(now));
    ASSERT_TRUE(controller_->run_pass(now));
  }
  void end(JobId id, Seconds now) {
    Result<StoredJob> job = store_->job(id);
    ASSERT_TRUE(job);
    v1::ExitRequest exits;
    v1::TaskStatus* task = exits.add_tasks();
    task->set_job_id(id);
    task->set_attempt(job->attempt);
    task->set_node("n" + std::to_string(job->nodes.at(0)));
    ASSERT_TRUE(controller_->report_exits(exits, caller_, now));
  }
  // The running jobs as the store has them; every core of every node held by at most one.
  std::vector<StoredJob> running_checked() {
    JobQuery active;
    active.only_active = true;
    Result<std::vector<StoredJob>> jobs = store_->list_jobs(active);
    EXPECT_TRUE(jobs);
    std::vector<StoredJob> running;
    std::map<NodeId, std::set<int>> held;
    int64_t memory[2] = {0, 0};
    for (const StoredJob& job : jobs ? *jobs : std::vector<StoredJob>{}) {
      if (job.state != JobState::kRunning) continue;
      running.push_back(job);
      EXPECT_EQ(job.grants.size(), job.nodes.size()) << "job " << job.id;
      for (const NodeGrant& grant : job.grants) {
        EXPECT_EQ(grant.node, job.nodes.at(0));
        for (int core : grant.cores)
          EXPECT_TRUE(held[grant.node].insert(core).second)
              << "core " << core << " of n" << grant.node << " given twice (job " << job.id << ")";
        memory[grant.node] += grant.memory_mb;
      }
    }
    for (int64_t m : memory) EXPECT_LE(m, 4096);
    return running;
  }

  testing::TempDir dir_;
  ClusterConfig config_;
  std::unique_ptr<StateStore> store_;
  testing::RecordingAgents agents_;
  std::unique_ptr<Controller> controller_;
  Caller caller_{static_cast<int>(getuid()), static_cast<int>(getgid())};
};

TEST_F(ControllerSharedNodesTest, OneCoreJobsPackOntoCoresAndNoCoreIsGivenTwice) {
  std::vector<JobId> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(submit({{"cpus-per-task", "1"}}, 1));
  pass(1);
  pass(1.1);  // one shared start per node per policy call: the core calls it again meanwhile
  std::vector<StoredJob> running = running_checked();
  ASSERT_EQ(running.size(), 4u) << "2 nodes x 2 cores";
  // Each launch names its grant and the node's inventory; 1 core and the partition's 1G each.
  int launches_with_grants = 0;
  for (const v1::LaunchRequest& launch : agents_.launches) {
    ASSERT_EQ(launch.node_grants_size(), 1);
    ASSERT_EQ(launch.node_types_size(), 1);
    Result<NodeGrant> grant = decode_grant(launch.node_grants(0));
    ASSERT_TRUE(grant) << launch.node_grants(0);
    EXPECT_EQ(grant->cores.size(), 1u);
    EXPECT_EQ(grant->memory_mb, 1024);
    EXPECT_NE(launch.node_types(0).find("cores=2"), std::string::npos);
    EXPECT_FALSE(launch.whole_nodes()) << "another job runs beside it";
    ++launches_with_grants;
  }
  EXPECT_EQ(launches_with_grants, 4);

  // A restarted controller reads the grants back: the fifth job still waits, no core is doubled.
  open(2);
  pass(2);
  pass(2.1);
  EXPECT_EQ(running_checked().size(), 4u);
  // An end frees its core for the fifth.
  end(running.front().id, 3);
  pass(3);
  pass(3.1);
  std::vector<StoredJob> after = running_checked();
  ASSERT_EQ(after.size(), 4u);
  EXPECT_TRUE(std::any_of(after.begin(), after.end(),
                          [&](const StoredJob& j) { return j.id == jobs.back(); }));
}

TEST_F(ControllerSharedNodesTest, AnExclusiveJobWaitsForAWholeNodeAndHoldsItAlone) {
  JobId small = submit({{"cpus-per-task", "1"}}, 1);
  pass(1);
  JobId whole = submit({{"exclusive", ""}}, 1.5);
  JobId other = submit({{"cpus-per-task", "1"}}, 1.6);
  pass(2);
  pass(2.1);
  std::vector<StoredJob> running = running_checked();
  std::map<JobId, StoredJob> by_id;
  for (const StoredJob& j : running) by_id[j.id] = j;
  ASSERT_TRUE(by_id.count(small) && by_id.count(whole) && by_id.count(other));
  // The exclusive job has both cores and all the memory of the node the small one is not on;
  // the other small one packs beside the first.
  EXPECT_NE(by_id[whole].nodes, by_id[small].nodes);
  EXPECT_EQ(by_id[whole].grants.at(0).cores, (std::vector<int>{0, 1}));
  EXPECT_EQ(by_id[whole].grants.at(0).memory_mb, 4096);
  EXPECT_EQ(by_id[other].nodes, by_id[small].nodes);
}

// An agent that could not hold a job to its grant (its limits did not take) reports the start
// refused: the node is at fault, so the job is requeued, not failed, and starts again; after
// kLaunchAttempts refusals it fails, saying why.
TEST_F(ControllerSharedNodesTest, AStartRefusedForLimitsThatDidNotTakeIsRequeued) {
  JobId id = submit({{"cpus-per-task", "1"}}, 10);
  for (int attempt = 1; attempt <= Controller::kLaunchAttempts; ++attempt) {
    pass(10 + attempt);
    Result<StoredJob> running = store_->job(id);
    ASSERT_TRUE(running);
    ASSERT_EQ(running->state, JobState::kRunning) << "attempt " << attempt;
    ASSERT_EQ(running->attempt, attempt);
    v1::ExitRequest exits;
    v1::TaskStatus* task = exits.add_tasks();
    task->set_job_id(id);
    task->set_attempt(attempt);
    task->set_node("n" + std::to_string(running->nodes.at(0)));
    task->set_exit_code(255);
    task->set_start_refused(true);
    task->set_reason("its limits did not take (cpuset.cpus says '' after '0')");
    ASSERT_TRUE(controller_->report_exits(exits, caller_, 20 + attempt));
    Result<StoredJob> after = store_->job(id);
    ASSERT_TRUE(after);
    EXPECT_NE(after->reason.find("its limits did not take"), std::string::npos) << after->reason;
    if (attempt < Controller::kLaunchAttempts) {
      EXPECT_EQ(after->state, JobState::kPending) << after->reason;
      EXPECT_NE(after->reason.find("(requeued)"), std::string::npos) << after->reason;
    } else {
      EXPECT_EQ(after->state, JobState::kFailed) << after->reason;
    }
  }
  running_checked();
}

TEST(SharedPartitionConfigTest, SharedNeedsEveryNodeTypedAQueuePolicyAndOneScheduler) {
  auto open_with = [](const std::string& text) -> std::string {
    testing::TempDir dir;
    Result<ClusterConfig> config = parse_cluster_config(text, "t.toml");
    if (!config) return config.error().message;
    config->store = "sqlite:" + (dir / "state.db");
    auto store = open_store(config->store);
    if (!store) return store.error().message;
    testing::RecordingAgents agents;
    auto c = Controller::open(*config, **store, agents, 0, "A");
    return c ? "opened" : c.error().message;
  };
  const std::string head = "[cluster]\nmachine = \"flat:2\"\nstore = \"sqlite:x.db\"\n";
  const std::string shared = "[[partition]]\nname = \"main\"\nshared = true\n";
  const std::string typed = "[[nodetype]]\nname = \"two\"\nresources = \"cores=2,mem=4G\"\n";
  EXPECT_EQ(open_with(head + "[controller]\n" + shared + typed), "opened");
  EXPECT_NE(open_with(head + "[controller]\n" + shared).find("needs a [[nodetype]] for every node"),
            std::string::npos);
  EXPECT_NE(open_with(head + "[controller]\npolicy = \"dqt-ffapa\"\n" + shared + typed)
                .find("time-shares whole nodes"),
            std::string::npos);
  EXPECT_NE(open_with(head + "[controller]\nallocation = \"concurrent\"\n" + shared + typed)
                .find("needs allocation = \"lease\""),
            std::string::npos);
  Result<ClusterConfig> bad = parse_cluster_config(
      head + "[controller]\n[[partition]]\nname = \"main\"\ndefault_mem_per_cpu = \"lots\"\n",
      "t.toml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("default_mem_per_cpu"), std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace trellis
