// Submissions and exit reports commit without the controller's memory lock (daemon/controller.h):
// a caller is answered once its batch is durable, even while a pass holds the memory, and the
// batch joins memory when the lock is next taken. Nothing is applied twice: a job submitted while
// a pass ran starts once, and an end committed meanwhile frees its nodes once.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "daemon/controller.h"
#include "daemon_test_support.h"
#include "store/state_store.h"

namespace trellis {
namespace {

// Records launches; while armed, the next launch blocks (inside the pass, which holds the
// controller's memory) until released.
class BlockingAgents final : public AgentLink {
 public:
  void launch(const std::vector<std::string>&, const v1::LaunchRequest& r) override {
    std::unique_lock lock(mutex_);
    launches_.push_back(r.job_id());
    if (!armed_) return;
    armed_ = false;
    blocked_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return !blocked_; });
  }
  void signal(const std::vector<std::string>&, const v1::SignalRequest&) override {}

  void arm() {
    std::lock_guard lock(mutex_);
    armed_ = true;
  }
  void wait_blocked() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return blocked_; });
  }
  bool blocked() {
    std::lock_guard lock(mutex_);
    return blocked_;
  }
  void release() {
    std::lock_guard lock(mutex_);
    blocked_ = false;
    changed_.notify_all();
  }
  std::multiset<JobId> launches() {
    std::lock_guard lock(mutex_);
    return {launches_.begin(), launches_.end()};
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false, blocked_ = false;
  std::vector<JobId> launches_;
};

class ControllerInboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.machine = "mesh:2x2";
    config_.store = "sqlite:" + (dir_ / "state.db");
    config_.controller.policy = "fcfs";
    config_.controller.heartbeat_interval = 1;
    config_.controller.heartbeat_misses = 1000;  // the fake agents never miss
    auto opened = open_store(config_.store);
    ASSERT_TRUE(opened) << opened.error().message;
    store_ = std::move(*opened);
    auto c = Controller::open(config_, *store_, agents_, kStart, "A");
    ASSERT_TRUE(c) << c.error().message;
    controller_ = std::move(*c);
    v1::RegisterRequest hello;
    hello.set_address("fake:1");
    for (const char* node : {"n0", "n1", "n2", "n3"}) hello.add_nodes(node);
    ASSERT_TRUE(controller_->register_agent(hello, admin_, kStart));
  }

  Result<JobId> submit(int nodes, Seconds now) {
    v1::JobSpec spec;
    spec.set_nodes(nodes);
    spec.set_time_limit(100);
    spec.add_argv("true");
    spec.set_cwd("/");
    return controller_->submit(spec, admin_, now);
  }

  Status exit_of(JobId id, const std::vector<std::string>& nodes, Seconds now) {
    v1::ExitRequest report;
    for (const std::string& node : nodes) {
      v1::TaskStatus* task = report.add_tasks();
      task->set_job_id(id);
      task->set_attempt(1);
      task->set_node(node);
    }
    return controller_->report_exits(report, admin_, now);
  }

  JobState state_of(JobId id) {
    Result<StoredJob> job = store_->job(id);
    EXPECT_TRUE(job) << job.error().message;
    return job ? job->state : JobState::kPending;
  }

  static constexpr Seconds kStart = 1000;
  // Far longer than a commit ever takes here: reaching it means the call waited for the pass.
  static constexpr auto kPatience = std::chrono::seconds(60);
  testing::TempDir dir_;
  ClusterConfig config_;
  std::unique_ptr<StateStore> store_;
  BlockingAgents agents_;
  std::unique_ptr<Controller> controller_;
  Caller admin_{static_cast<int>(getuid()), static_cast<int>(getgid())};
};

TEST_F(ControllerInboxTest, ASubmissionIsAnsweredWhileAPassHoldsTheMemoryAndStartsOnce) {
  Result<JobId> first = submit(2, kStart);
  ASSERT_TRUE(first) << first.error().message;
  agents_.arm();
  std::thread pass([&] { (void)controller_->run_pass(kStart + 1); });
  agents_.wait_blocked();  // the pass holds the memory, launching the first job

  std::future<Result<JobId>> second =
      std::async(std::launch::async, [&] { return submit(2, kStart + 2); });
  bool answered = second.wait_for(kPatience) == std::future_status::ready;
  bool pass_still_held = agents_.blocked();
  agents_.release();
  pass.join();
  ASSERT_TRUE(answered) << "the submission waited for the pass";
  EXPECT_TRUE(pass_still_held);
  Result<JobId> id = second.get();
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(state_of(*id), JobState::kPending);

  // The next pass takes the job from the inbox and starts it on the two nodes left, once.
  Result<std::vector<JobId>> started = controller_->run_pass(kStart + 3);
  ASSERT_TRUE(started) << started.error().message;
  EXPECT_EQ(*started, std::vector<JobId>{*id});
  Result<std::vector<JobId>> again = controller_->run_pass(kStart + 4);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(agents_.launches(), (std::multiset<JobId>{*first, *id}));
  EXPECT_EQ(state_of(*id), JobState::kRunning);
}

TEST_F(ControllerInboxTest, AnExitReportIsAnsweredWhileAPassHoldsTheMemoryAndFreesTheNodes) {
  // Three jobs of the whole machine: each starts when the one before has ended.
  Result<JobId> first = submit(4, kStart);
  Result<JobId> second = submit(4, kStart);
  Result<JobId> third = submit(4, kStart);
  ASSERT_TRUE(first && second && third);
  Result<std::vector<JobId>> started = controller_->run_pass(kStart + 1);
  ASSERT_TRUE(started && *started == std::vector<JobId>{*first});
  ASSERT_TRUE(exit_of(*first, {"n0", "n1", "n2", "n3"}, kStart + 2));

  agents_.arm();
  std::thread pass([&] { (void)controller_->run_pass(kStart + 3); });
  agents_.wait_blocked();  // the pass holds the memory, launching the second job
  std::future<Status> exited = std::async(std::launch::async, [&] {
    return exit_of(*second, {"n0", "n1", "n2", "n3"}, kStart + 4);
  });
  bool answered = exited.wait_for(kPatience) == std::future_status::ready;
  agents_.release();
  pass.join();
  ASSERT_TRUE(answered) << "the exit report waited for the pass";
  Status ok = exited.get();
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(state_of(*second), JobState::kCompleted);

  // The next pass takes the end from the inbox: the third job starts on the freed machine, once.
  Result<std::vector<JobId>> next = controller_->run_pass(kStart + 5);
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(*next, std::vector<JobId>{*third});
  Result<std::vector<JobId>> after = controller_->run_pass(kStart + 6);
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_TRUE(after->empty());
  EXPECT_EQ(agents_.launches(), (std::multiset<JobId>{*first, *second, *third}));
}

}  // namespace
}  // namespace trellis
