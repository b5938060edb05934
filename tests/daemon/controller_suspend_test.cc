// An administrator's suspend and resume of running jobs (as Slurm's scontrol suspend/resume),
// with the controller in virtual time and recording agents: under a queue policy a suspended job
// is frozen on its nodes, keeps them, and its time limit stops counting; under a gang policy it
// leaves the rotation and the other jobs take its slots. Only administrators may do it, only to
// running jobs, and a restarted controller keeps a suspended job suspended.
#include <unistd.h>

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "daemon/controller.h"
#include "daemon_test_support.h"
#include "store/state_store.h"

namespace trellis {
namespace {

class ControllerSuspendTest : public ::testing::Test {
 protected:
  static constexpr Seconds kStart = 1000;
  static constexpr Seconds kStep = 0.05;

  void SetUp() override {
    config_.machine = "mesh:2x2";
    config_.store = "sqlite:" + (dir_ / "state.db");
    config_.controller.heartbeat_interval = 1;
    config_.controller.heartbeat_misses = 1000;  // the fake agent never misses
  }

  // Opens the controller on the store (again, after a restart) with `policy`.
  void open(const std::string& policy, Seconds now) {
    config_.controller.policy = policy;
    config_.controller.slice = 0.5;
    if (!store_) {
      auto store = open_store(config_.store);
      ASSERT_TRUE(store) << store.error().message;
      store_ = std::move(*store);
    }
    auto controller = Controller::open(config_, *store_, agents_, now);
    ASSERT_TRUE(controller) << controller.error().message;
    controller_ = std::move(*controller);
    v1::RegisterRequest hello;
    hello.set_address("fake:1");
    for (const char* node : {"n0", "n1", "n2", "n3"}) hello.add_nodes(node);
    ASSERT_TRUE(controller_->register_agent(hello, admin_, now));
  }

  JobId submit(int nodes, Seconds time_limit, Seconds now, bool share = false) {
    v1::JobSpec spec;
    spec.set_nodes(nodes);
    spec.set_time_limit(time_limit);
    spec.set_share(share);
    spec.add_argv("true");
    spec.set_cwd("/");
    Result<JobId> id = controller_->submit(spec, admin_, now);
    EXPECT_TRUE(id) << id.error().message;
    return id ? *id : -1;
  }

  // Runs the controller as trellisd's loop would, every kStep from `from` to `to` (both included).
  void run(Seconds from, Seconds to) {
    for (long i = 0; from + i * kStep <= to + 1e-9; ++i) {
      Seconds t = from + i * kStep;
      ASSERT_TRUE(controller_->tick(t));
      if (controller_->pass_due(t)) {
        ASSERT_TRUE(controller_->run_pass(t));
      }
    }
  }

  v1::JobInfo job(JobId id, Seconds now) {
    v1::ListJobsRequest request;
    request.add_job_ids(id);
    Result<v1::ListJobsReply> listed = controller_->list_jobs(request, now);
    EXPECT_TRUE(listed && listed->jobs_size() == 1);
    return listed && listed->jobs_size() == 1 ? listed->jobs(0) : v1::JobInfo{};
  }

  // The terminate signals sent to `job` so far (a time limit or a cancel).
  int terminations(JobId job) {
    int n = 0;
    for (const v1::SignalRequest& s : agents_.signals) n += s.job_id() == job && s.signal() == 0;
    return n;
  }

  // How often the switches from the `from`th on froze and thawed `job`.
  std::pair<int, int> freezes_and_thaws(JobId job, size_t from = 0) {
    std::pair<int, int> counts;
    for (size_t i = from; i < agents_.switches.size(); ++i) {
      for (const auto& [id, attempt] : agents_.switches[i].freeze) counts.first += id == job;
      for (const auto& [id, attempt] : agents_.switches[i].thaw) counts.second += id == job;
    }
    return counts;
  }

  // Whether the switches so far leave `job` frozen, replaying them in order.
  bool frozen_after_switches(JobId job) {
    bool frozen = false;
    for (const SwitchOrder& o : agents_.switches) {
      for (const auto& [id, attempt] : o.freeze) frozen = frozen || id == job;
      for (const auto& [id, attempt] : o.thaw) frozen = frozen && id != job;
    }
    return frozen;
  }

  testing::TempDir dir_;
  ClusterConfig config_;
  testing::RecordingAgents agents_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Controller> controller_;
  Caller admin_{static_cast<int>(getuid()), static_cast<int>(getgid())};
  Caller user_{static_cast<int>(getuid()) + 4242, static_cast<int>(getgid())};
};

TEST_F(ControllerSuspendTest, ASuspendedBatchJobIsFrozenKeepsItsNodesAndItsLimitWaits) {
  open("easy", kStart);
  JobId a = submit(4, 100, kStart);
  run(kStart, kStart + 1);
  ASSERT_EQ(job(a, kStart + 1).state(), v1::RUNNING);

  Result<std::vector<JobId>> suspended = controller_->suspend({a}, admin_, kStart + 10);
  ASSERT_TRUE(suspended) << suspended.error().message;
  EXPECT_EQ(*suspended, std::vector<JobId>{a});
  ASSERT_EQ(agents_.switches.size(), 1u);
  EXPECT_EQ(agents_.switches[0].freeze, (std::vector<SwitchOrder::JobAttempt>{{a, 1}}));
  EXPECT_TRUE(agents_.switches[0].thaw.empty());
  EXPECT_EQ(agents_.switches[0].agents, std::vector<std::string>{"fake:1"});
  v1::JobInfo shown = job(a, kStart + 10);
  EXPECT_EQ(shown.state(), v1::SUSPENDED);
  EXPECT_TRUE(shown.admin_suspended());
  // Suspending it again changes nothing.
  Result<std::vector<JobId>> again = controller_->suspend({a}, admin_, kStart + 11);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->empty());
  EXPECT_EQ(agents_.switches.size(), 1u);

  // Its nodes are not given to another job.
  JobId b = submit(1, 100, kStart + 10);
  run(kStart + 10, kStart + 60 - kStep);
  EXPECT_EQ(job(b, kStart + 60).state(), v1::PENDING);
  EXPECT_EQ(agents_.launches.size(), 1u);
  EXPECT_EQ(terminations(a), 0);  // 100 s have passed, 50 of them suspended
  EXPECT_NEAR(job(a, kStart + 60).seconds_frozen(), 50, 1e-6);

  // Resumed: thawed, and its limit comes exactly 50 s late.
  Result<std::vector<JobId>> resumed = controller_->resume({a}, admin_, kStart + 60);
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(*resumed, std::vector<JobId>{a});
  ASSERT_EQ(agents_.switches.size(), 2u);
  EXPECT_TRUE(agents_.switches[1].freeze.empty());
  EXPECT_EQ(agents_.switches[1].thaw, (std::vector<SwitchOrder::JobAttempt>{{a, 1}}));
  shown = job(a, kStart + 60);
  EXPECT_EQ(shown.state(), v1::RUNNING);
  EXPECT_FALSE(shown.admin_suspended());
  run(kStart + 60, kStart + 150 - kStep);
  EXPECT_EQ(terminations(a), 0);
  run(kStart + 150, kStart + 150);
  EXPECT_EQ(terminations(a), 1);
}

TEST_F(ControllerSuspendTest,
       OnlyAdministratorsSuspendAndOnlyRunningJobsAndARefusalChangesNothing) {
  open("easy", kStart);
  JobId a = submit(4, 100, kStart);
  run(kStart, kStart + 1);
  JobId pending = submit(2, 100, kStart + 2);
  run(kStart + 2, kStart + 3);
  ASSERT_EQ(job(pending, kStart + 3).state(), v1::PENDING);

  Result<std::vector<JobId>> denied = controller_->suspend({a}, user_, kStart + 4);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code, Error::Code::kPermissionDenied);
  EXPECT_NE(denied.error().message.find(std::to_string(user_.uid)), std::string::npos)
      << denied.error().message;
  EXPECT_FALSE(controller_->resume({a}, user_, kStart + 4));

  Result<std::vector<JobId>> not_running = controller_->suspend({a, pending}, admin_, kStart + 4);
  ASSERT_FALSE(not_running);
  EXPECT_EQ(not_running.error().code, Error::Code::kInvalidArgument);
  EXPECT_EQ(not_running.error().message,
            "job " + std::to_string(pending) + " is PD: only a running job can be suspended");

  Result<std::vector<JobId>> unknown = controller_->suspend({a, 999}, admin_, kStart + 4);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, Error::Code::kNotFound);
  EXPECT_NE(unknown.error().message.find("999"), std::string::npos);

  Result<std::vector<JobId>> not_suspended = controller_->resume({pending}, admin_, kStart + 4);
  ASSERT_FALSE(not_suspended);
  EXPECT_EQ(not_suspended.error().message,
            "job " + std::to_string(pending) + " is PD: only a suspended job can be resumed");
  // A running job that is not suspended is left as it is.
  Result<std::vector<JobId>> running = controller_->resume({a}, admin_, kStart + 4);
  ASSERT_TRUE(running);
  EXPECT_TRUE(running->empty());

  // Nothing changed: no switch, the job still runs and its limit comes on time.
  EXPECT_TRUE(agents_.switches.empty());
  EXPECT_EQ(job(a, kStart + 4).state(), v1::RUNNING);
  EXPECT_FALSE(job(a, kStart + 4).admin_suspended());
  run(kStart + 4, kStart + 100);
  EXPECT_EQ(terminations(a), 1);

  // A job that is stopping (CG) cannot be suspended either.
  Result<std::vector<JobId>> stopping = controller_->suspend({a}, admin_, kStart + 101);
  ASSERT_FALSE(stopping);
  EXPECT_EQ(stopping.error().message,
            "job " + std::to_string(a) + " is CG: only a running job can be suspended");
}

TEST_F(ControllerSuspendTest, ARestartedControllerKeepsABatchJobSuspendedAndItsFrozenTime) {
  open("easy", kStart);
  JobId a = submit(4, 100, kStart);
  run(kStart, kStart + 1);
  ASSERT_TRUE(controller_->suspend({a}, admin_, kStart + 10));
  run(kStart + 10, kStart + 20);  // a pass commits the frozen time

  // A crash: a new controller opens the same store.
  controller_.reset();
  agents_.switches.clear();
  open("easy", kStart + 30);
  run(kStart + 30, kStart + 60 - kStep);
  v1::JobInfo shown = job(a, kStart + 60);
  EXPECT_EQ(shown.state(), v1::SUSPENDED);
  EXPECT_TRUE(shown.admin_suspended());
  EXPECT_EQ(shown.attempt(), 1);
  EXPECT_NEAR(shown.seconds_frozen(), 50, 1e-6);
  // The agents are told again that it is frozen (they may have missed it), and nothing else.
  ASSERT_FALSE(agents_.switches.empty());
  for (const SwitchOrder& o : agents_.switches) {
    EXPECT_EQ(o.freeze, (std::vector<SwitchOrder::JobAttempt>{{a, 1}}));
    EXPECT_TRUE(o.thaw.empty());
  }
  EXPECT_EQ(terminations(a), 0);

  ASSERT_TRUE(controller_->resume({a}, admin_, kStart + 60));
  EXPECT_FALSE(frozen_after_switches(a));
  run(kStart + 60, kStart + 150 - kStep);
  EXPECT_EQ(terminations(a), 0);
  run(kStart + 150, kStart + 150);
  EXPECT_EQ(terminations(a), 1);
}

TEST_F(ControllerSuspendTest, UnderAGangPolicyASuspendedJobLeavesTheRotation) {
  open("dqt-ffapa", kStart);
  ASSERT_TRUE(controller_->time_shares());
  JobId a = submit(4, 3600, kStart, /*share=*/true);
  JobId b = submit(4, 3600, kStart, /*share=*/true);
  run(kStart, kStart + 5);
  ASSERT_GT(freezes_and_thaws(a).second, 0);  // they take turns
  ASSERT_GT(freezes_and_thaws(b).second, 0);

  Result<std::vector<JobId>> suspended = controller_->suspend({a}, admin_, kStart + 5.02);
  ASSERT_TRUE(suspended) << suspended.error().message;
  EXPECT_EQ(*suspended, std::vector<JobId>{a});
  const size_t at_suspend = agents_.switches.size();
  run(kStart + 5.05, kStart + 6);
  // At most a slot later, b runs and a is frozen...
  EXPECT_TRUE(frozen_after_switches(a));
  EXPECT_FALSE(frozen_after_switches(b));
  EXPECT_EQ(freezes_and_thaws(a, at_suspend).second, 0);
  // ...and from then on b runs in every slot: a is never thawed, b never frozen.
  const size_t settled = agents_.switches.size();
  run(kStart + 6.05, kStart + 10);
  EXPECT_EQ(freezes_and_thaws(a, settled), std::make_pair(0, 0));
  EXPECT_EQ(freezes_and_thaws(b, settled), std::make_pair(0, 0));
  v1::JobInfo shown_a = job(a, kStart + 10);
  v1::JobInfo shown_b = job(b, kStart + 10);
  EXPECT_EQ(shown_a.state(), v1::SUSPENDED);
  EXPECT_TRUE(shown_a.admin_suspended());
  EXPECT_FALSE(shown_a.idle());  // not probed as idle
  EXPECT_EQ(shown_b.state(), v1::RUNNING);
  EXPECT_FALSE(shown_b.admin_suspended());
  EXPECT_GE(shown_a.seconds_frozen(), 5.0 - 0.5);
  for (size_t i = at_suspend; i < agents_.switches.size(); ++i)
    for (const auto& [id, attempt] : agents_.switches[i].probe) EXPECT_NE(id, a);
  // A switch reply that says a's processes all wait for messages does not make it a deadlock.
  SwitchOutcome outcome;
  v1::JobActivity* activity = outcome.reply.add_activity();
  activity->set_job_id(a);
  activity->set_attempt(1);
  activity->set_tasks(4);
  activity->set_processes(4);
  activity->set_waiting_message(4);
  controller_->switch_done(outcome, kStart + 10);
  controller_->switch_done(outcome, kStart + 10);
  EXPECT_EQ(job(a, kStart + 10).reason().find("globally stopped"), std::string::npos);

  // Resumed: back into the rotation, they take turns again.
  Result<std::vector<JobId>> resumed = controller_->resume({a}, admin_, kStart + 10.02);
  ASSERT_TRUE(resumed) << resumed.error().message;
  EXPECT_EQ(*resumed, std::vector<JobId>{a});
  const size_t at_resume = agents_.switches.size();
  run(kStart + 10.05, kStart + 15);
  EXPECT_GE(freezes_and_thaws(a, at_resume).second, 3);
  EXPECT_GE(freezes_and_thaws(b, at_resume).first, 3);
  EXPECT_FALSE(job(a, kStart + 15).admin_suspended());
  EXPECT_EQ(terminations(a) + terminations(b), 0);
}

TEST_F(ControllerSuspendTest, UnderAGangPolicyARestartedControllerKeepsAJobSuspended) {
  open("dqt-ffapa", kStart);
  JobId a = submit(4, 3600, kStart, /*share=*/true);
  JobId b = submit(4, 3600, kStart, /*share=*/true);
  run(kStart, kStart + 3);
  ASSERT_TRUE(controller_->suspend({a}, admin_, kStart + 3.02));
  run(kStart + 3.05, kStart + 6);

  controller_.reset();
  agents_.switches.clear();
  open("dqt-ffapa", kStart + 7);
  run(kStart + 7, kStart + 12);
  EXPECT_EQ(job(a, kStart + 12).state(), v1::SUSPENDED);
  EXPECT_TRUE(job(a, kStart + 12).admin_suspended());
  EXPECT_EQ(job(a, kStart + 12).attempt(), 1);
  // Told frozen at once, and never thawed; b runs.
  ASSERT_FALSE(agents_.switches.empty());
  EXPECT_EQ(freezes_and_thaws(a).second, 0);
  EXPECT_TRUE(frozen_after_switches(a));
  EXPECT_FALSE(frozen_after_switches(b));

  ASSERT_TRUE(controller_->resume({a}, admin_, kStart + 12.02));
  const size_t at_resume = agents_.switches.size();
  run(kStart + 12.05, kStart + 16);
  EXPECT_GT(freezes_and_thaws(a, at_resume).second, 0);
  EXPECT_GT(freezes_and_thaws(b, at_resume).first, 0);
}

}  // namespace
}  // namespace trellis
