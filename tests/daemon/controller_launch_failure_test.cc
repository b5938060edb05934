// A launch that an agent refuses, or that never reaches it, must not leave a job "running"
// forever: the attempt ends, a transient failure requeues the job (a few times), a refused
// request fails it. Found by `trellis bench live`, where three launches failed and their jobs
// never ended.
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "daemon/controller.h"
#include "daemon_test_support.h"
#include "store/state_store.h"

namespace trellis {
namespace {

class LaunchFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / "trellis-launch-failure";
    dir_ += std::to_string(getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ClusterConfig config;
    config.machine = "flat:4";
    config.store = "sqlite:" + (dir_ / "state.db").string();
    config.controller.heartbeat_interval = 1e9;
    auto store = open_store(config.store);
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    auto controller = Controller::open(config, *store_, agents_, 0);
    ASSERT_TRUE(controller) << controller.error().message;
    controller_ = std::move(*controller);
    v1::RegisterRequest hello;
    hello.set_address("fake:1");
    for (const char* node : {"n0", "n1", "n2", "n3"}) hello.add_nodes(node);
    ASSERT_TRUE(controller_->register_agent(hello, daemon_, 0));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  JobId submit(int nodes) {
    v1::JobSpec spec;
    spec.set_nodes(nodes);
    spec.add_argv("true");
    spec.set_cwd("/tmp");
    Result<JobId> id = controller_->submit(spec, daemon_, now_);
    EXPECT_TRUE(id) << id.error().message;
    return id ? *id : 0;
  }
  void pass() {
    now_ += 1;
    ASSERT_TRUE(controller_->run_pass(now_));
  }
  StoredJob stored(JobId id) {
    Result<StoredJob> job = store_->job(id);
    EXPECT_TRUE(job) << job.error().message;
    return job ? *job : StoredJob{};
  }

  std::filesystem::path dir_;
  testing::RecordingAgents agents_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Controller> controller_;
  Caller daemon_{static_cast<int>(getuid()), static_cast<int>(getgid())};
  Seconds now_ = 0;
};

TEST_F(LaunchFailureTest, TransientFailuresRequeueUntilTheLastAttemptFails) {
  JobId id = submit(2);
  for (int attempt = 1; attempt <= Controller::kLaunchAttempts; ++attempt) {
    pass();
    ASSERT_EQ(agents_.launches.size(), static_cast<size_t>(attempt));
    ASSERT_EQ(agents_.launches.back().attempt(), attempt);
    EXPECT_EQ(stored(id).state, JobState::kRunning);
    ASSERT_TRUE(controller_->launch_failed(
        id, attempt, Error{"agent unreachable", Error::Code::kUnavailable}, now_));
    // Its processes that may have started elsewhere are killed.
    ASSERT_FALSE(agents_.signals.empty());
    EXPECT_EQ(agents_.signals.back().attempt(), attempt);
    StoredJob job = stored(id);
    if (attempt < Controller::kLaunchAttempts) {
      EXPECT_EQ(job.state, JobState::kPending) << job.reason;
    } else {
      EXPECT_EQ(job.state, JobState::kFailed);
      EXPECT_NE(job.reason.find("agent unreachable"), std::string::npos) << job.reason;
    }
  }
  pass();  // nothing left to start; the nodes are free for the next job
  EXPECT_EQ(agents_.launches.size(), static_cast<size_t>(Controller::kLaunchAttempts));
  JobId next = submit(4);
  pass();
  EXPECT_EQ(stored(next).state, JobState::kRunning);
}

TEST_F(LaunchFailureTest, ARefusedRequestFailsTheJobAtOnce) {
  JobId id = submit(1);
  pass();
  ASSERT_TRUE(controller_->launch_failed(
      id, 1, Error{"uid: cannot become uid 4242", Error::Code::kInvalidArgument}, now_));
  StoredJob job = stored(id);
  EXPECT_EQ(job.state, JobState::kFailed);
  EXPECT_NE(job.reason.find("uid 4242"), std::string::npos) << job.reason;
}

TEST_F(LaunchFailureTest, AFailureOfAnOlderAttemptChangesNothing) {
  JobId id = submit(1);
  pass();
  ASSERT_TRUE(controller_->launch_failed(id, 1, Error{"x", Error::Code::kUnavailable}, now_));
  pass();
  ASSERT_EQ(stored(id).attempt, 2);
  // A second report of attempt 1's failure (retried sender) must not end attempt 2.
  ASSERT_TRUE(controller_->launch_failed(id, 1, Error{"x", Error::Code::kUnavailable}, now_));
  EXPECT_EQ(stored(id).state, JobState::kRunning);
  EXPECT_EQ(stored(id).attempt, 2);
}

}  // namespace
}  // namespace trellis
