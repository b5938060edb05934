// Gang switches on real trellis-agent processes: the freezer (cgroup or signals, whichever the
// host allows, and signals forced), the control tree of agents with its barrier and reduction, a
// dead agent in the middle of the tree, and the tree's shape.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "../build_paths.h"
#include "daemon/auth.h"
#include "daemon/freezer.h"
#include "daemon/munge_daemon.h"
#include "daemon/proc_stat.h"
#include "daemon/switch_node.h"
#include "daemon/switch_sender.h"
#include "daemon/tree/tree_auth.h"
#include "daemon/tree/tree_channel.h"
#include "daemon/tree/tree_reply.h"
#include "daemon/tree/tree_sender.h"
#include "daemon/tree/tree_shape.h"
#include "daemon_test_support.h"

namespace trellis {
namespace {

using testing::eventually;
using testing::read_file;

// --- The tree's shape -------------------------------------------------------------------------

// Walks the tree rooted at `root` as the agents would build it; every agent reached is counted
// in `seen` (with how often) and the depth is returned.
int walk(const std::string& root, const std::vector<std::string>& subtree, int fanout,
         std::map<std::string, int>& seen) {
  ++seen[root];
  int depth = 0;
  std::vector<TreeChild> children = tree_children(subtree, fanout);
  EXPECT_LE(static_cast<int>(children.size()), fanout);
  for (const TreeChild& child : children)
    depth = std::max(depth, walk(child.agent, child.subtree, fanout, seen));
  return depth + 1;
}

TEST(SwitchTreeTest, EveryAgentIsReachedOnceWithinLogFanoutLevels) {
  for (int n = 1; n <= 130; ++n) {
    std::vector<std::string> agents;
    for (int i = 0; i < n; ++i) agents.push_back(std::string("a").append(std::to_string(i)));
    for (int fanout : {1, 2, 3, 4, 8, 16, 64}) {
      std::map<std::string, int> seen;
      int depth = walk(agents[0], {agents.begin() + 1, agents.end()}, fanout, seen);
      ASSERT_EQ(static_cast<int>(seen.size()), n) << "n " << n << " fanout " << fanout;
      for (const auto& [agent, times] : seen) ASSERT_EQ(times, 1) << agent;
      // A balanced k-ary tree: the root's subtrees differ by at most one agent, so the depth is
      // that of the smallest complete tree holding n agents (a chain when fanout is 1).
      int levels = 1;
      long capacity = 1, level_size = 1;
      while (capacity < n) {
        level_size *= fanout;
        capacity += level_size;
        ++levels;
      }
      ASSERT_LE(depth, fanout == 1 ? n : levels + 1) << "n " << n << " fanout " << fanout;
    }
  }
}

TEST(SwitchTreeTest, RepliesFoldIntoSumsAndTheSlowestPhase) {
  v1::TreeReply a, b;
  a.set_agents(1);
  a.mutable_gang_switch()->set_freeze_us(10);
  a.mutable_gang_switch()->set_thaw_us(50);
  v1::JobActivity* x = a.mutable_gang_switch()->add_activity();
  x->set_job_id(7);
  x->set_attempt(1);
  x->set_tasks(1);
  x->set_processes(2);
  x->set_waiting_input(2);
  b.set_agents(3);
  b.mutable_gang_switch()->set_freeze_us(30);
  b.mutable_gang_switch()->set_thaw_us(5);
  b.add_failed("h:1");
  *b.mutable_gang_switch()->add_activity() = *x;
  b.mutable_gang_switch()->mutable_activity(0)->set_running(1);
  merge_tree_reply(b, a);
  EXPECT_EQ(a.agents(), 4);
  const v1::SwitchReply& s = a.gang_switch();
  EXPECT_EQ(s.freeze_us(), 30);
  EXPECT_EQ(s.thaw_us(), 50);
  ASSERT_EQ(s.activity_size(), 1);
  EXPECT_EQ(s.activity(0).tasks(), 2);
  EXPECT_EQ(s.activity(0).processes(), 4);
  EXPECT_EQ(s.activity(0).waiting_input(), 4);
  EXPECT_EQ(s.activity(0).running(), 1);
  EXPECT_EQ(a.failed_size(), 1);
}

// --- The freezer on real processes --------------------------------------------------------------

// CPU ticks used so far by every process of a process group.
long long group_cpu(pid_t process_group) {
  long long total = 0;
  for (pid_t pid : processes_in_group(process_group))
    if (Result<ProcStat> s = read_proc_stat(pid)) total += s->cpu_ticks;
  return total;
}

// Whether any thread of the group is seen running ('R') in `samples` looks `gap` apart, and
// whether the group used CPU time meanwhile.
bool seen_running(pid_t process_group, int samples, std::chrono::milliseconds gap) {
  long long before = group_cpu(process_group);
  for (int i = 0; i < samples; ++i) {
    for (pid_t pid : processes_in_group(process_group))
      if (Result<ProcStat> s = read_proc_stat(pid); s && s->state == 'R') return true;
    std::this_thread::sleep_for(gap);
  }
  return group_cpu(process_group) != before;
}

// A process group of two spinning shells (a parent and its child), started in the freezer
// group's cgroup when there is one.
pid_t spin_group(const std::string& cgroup_procs) {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    if (!cgroup_procs.empty()) {
      std::ofstream procs(cgroup_procs);
      procs << "0" << std::flush;
    }
    ::execl("/bin/sh", "sh", "-c", "(while :; do :; done) & while :; do :; done", nullptr);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

void freezes_and_thaws(Freezer freezer) {
  // Timing-checked (nothing may be seen on a CPU within 100 ms of a freeze): never beside the
  // tests that fork thousands of processes.
  testing::ExclusiveHostLock exclusive;
  SCOPED_TRACE(std::string(freeze_method_name(freezer.method())));
  Result<std::string> procs = freezer.prepare("41.1");
  ASSERT_TRUE(procs) << procs.error().message;
  pid_t group = spin_group(*procs);
  ASSERT_TRUE(eventually([&] { return processes_in_group(group).size() >= 2; }));
  ASSERT_TRUE(seen_running(group, 20, std::chrono::milliseconds(5)));

  for (int round = 0; round < 5; ++round) {
    ASSERT_TRUE(freezer.freeze("41.1", {group}));
    // Confirmed: once freeze() returns, no code of the group's runs, so its CPU time stands
    // still. (A task that a thaw had woken but the scheduler had not yet run counts as frozen
    // and may show 'R' until it gets a CPU, on a loaded host for a while: then it goes straight
    // back into the freezer from the kernel. So 'R' is looked for once none shows, which a task
    // left running never does, and the CPU time from the moment freeze() returned.)
    const long long frozen_at = group_cpu(group);
    EXPECT_TRUE(eventually([&] { return !seen_running(group, 1, std::chrono::milliseconds(0)); },
                           std::chrono::seconds(2)))
        << "round " << round;
    EXPECT_FALSE(seen_running(group, 20, std::chrono::milliseconds(5))) << "round " << round;
    EXPECT_EQ(group_cpu(group), frozen_at) << "round " << round;
    ASSERT_TRUE(freezer.thaw("41.1", {group}));
    EXPECT_TRUE(eventually([&] { return seen_running(group, 5, std::chrono::milliseconds(5)); }));
  }
  ::kill(-group, SIGKILL);
  while (::waitpid(group, nullptr, 0) < 0 && errno == EINTR) {
  }
  EXPECT_TRUE(eventually([&] { return processes_in_group(group).empty(); }));
  freezer.remove("41.1");
  freezer.remove_root();
}

TEST(FreezerTest, FreezesEveryProcessOfAGroupWithTheHostsBestMethod) {
  freezes_and_thaws(Freezer::open({.name = "test-" + std::to_string(::getpid())}));
}

// Every task of a group has ended, but a process that left its process group (setsid, a
// daemonising rank) is still in the group's cgroup: remove() kills it rather than leave it
// running after its job.
TEST(FreezerTest, RemovingAGroupKillsWhatLeftItsProcessGroups) {
  Freezer freezer = Freezer::open({.name = "escape-" + std::to_string(::getpid())});
  if (freezer.method() == FreezeMethod::kSignals) GTEST_SKIP() << "no cgroup can be made here";
  Result<std::string> procs = freezer.prepare("44.1");
  ASSERT_TRUE(procs) << procs.error().message;
  pid_t escaped = ::fork();
  if (escaped == 0) {
    std::ofstream(*procs) << "0" << std::flush;
    ::setsid();
    ::execl("/bin/sleep", "sleep", "1000", nullptr);
    ::_exit(127);
  }
  ASSERT_TRUE(eventually([&] {
    std::optional<std::vector<pid_t>> in = freezer.processes("44.1");
    return in && in->size() == 1 && (*in)[0] == escaped;
  }));
  EXPECT_EQ(freezer.remove("44.1"), 1);
  int status = 0;
  ASSERT_TRUE(eventually([&] { return ::waitpid(escaped, &status, WNOHANG) == escaped; }));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_FALSE(freezer.processes("44.1"));  // its cgroup is gone
  // A group without such a process: nothing is killed.
  ASSERT_TRUE(freezer.prepare("45.1"));
  EXPECT_EQ(freezer.remove("45.1"), 0);
  freezer.remove_root();
}

TEST(FreezerTest, FreezesEveryProcessOfAGroupWithSignals) {
  Freezer freezer = Freezer::open({.name = "sig", .force_signals = true});
  EXPECT_EQ(freezer.method(), FreezeMethod::kSignals);
  freezes_and_thaws(std::move(freezer));
}

TEST(FreezerTest, AGroupFrozenBeforeItsProcessesStartStartsFrozen) {
  Freezer freezer = Freezer::open({.name = "early-" + std::to_string(::getpid())});
  if (freezer.method() == FreezeMethod::kSignals)
    GTEST_SKIP() << "no freezer cgroup on this host: the agent stops such a task as it starts";
  ASSERT_TRUE(freezer.freeze("42.1", {}));
  Result<std::string> procs = freezer.prepare("42.1");
  ASSERT_TRUE(procs);
  pid_t group = spin_group(*procs);
  ASSERT_TRUE(eventually([&] { return !processes_in_group(group).empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(seen_running(group, 20, std::chrono::milliseconds(5)));
  ASSERT_TRUE(freezer.thaw("42.1", {group}));
  EXPECT_TRUE(eventually([&] { return seen_running(group, 5, std::chrono::milliseconds(5)); }));
  ::kill(-group, SIGKILL);
  while (::waitpid(group, nullptr, 0) < 0 && errno == EINTR) {
  }
  EXPECT_TRUE(eventually([&] { return processes_in_group(group).empty(); }));
  freezer.remove("42.1");
  freezer.remove_root();
}

// --- A tree of real agents ------------------------------------------------------------------

#ifdef TRELLIS_AGENT_BINARY

class GangSwitchTest : public ::testing::Test {
 protected:
  static constexpr int kAgents = 7;

  void SetUp() override {
    Result<MungeDaemon> started = MungeDaemon::start(dir_ / "munge");
    ASSERT_TRUE(started) << started.error().message;
    munge_ = std::make_unique<MungeDaemon>(std::move(*started));
    controller_ = std::make_unique<testing::ControllerServer>(munge_->socket());
    ASSERT_TRUE(controller_->ok());
    credentials_ = std::make_unique<CredentialSource>(munge_->socket());
    signer_ = std::make_unique<TreeSigner>(*credentials_, static_cast<int>(::geteuid()));
    channel_ = std::make_unique<TreeChannel>();
    tree_ = std::make_unique<TreeSender>(*signer_, *channel_, "gang switch test");
    for (int k = 0; k < kAgents; ++k) start_agent(k);
  }

  void TearDown() override {
    // Every job a test launches (1 to 4) is killed on every agent still alive.
    for (size_t k = 0; k < agents_.size(); ++k) {
      if (!agents_[k]) continue;
      for (int64_t job : {1, 2, 3, 4}) {
        v1::SignalRequest request;
        request.set_job_id(job);
        request.set_signal(SIGKILL);
        v1::SignalReply reply;
        call(k, [&](v1::Agent::Stub& stub, grpc::ClientContext& context) {
          return stub.Signal(&context, request, &reply);
        });
      }
    }
    for (pid_t group : groups_)
      EXPECT_TRUE(eventually([&] { return processes_in_group(group).empty(); }));
    agents_.clear();
  }

  void start_agent(int k) {
    std::string state = dir_ / ("agent-" + std::to_string(k));
    std::string port_file = state + ".port", tree_port_file = state + ".tree-port";
    agents_.push_back(std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{TRELLIS_AGENT_BINARY, "--controller", controller_->address(),
                                 "--nodes", "n" + std::to_string(k), "--state-dir", state,
                                 "--munge-socket", munge_->socket(), "--port-file", port_file,
                                 "--tree-port-file", tree_port_file},
        state + ".log"));
    ASSERT_TRUE(eventually([&] { return std::filesystem::exists(port_file); }))
        << read_file(state + ".log");
    ASSERT_TRUE(eventually([&] { return std::filesystem::exists(tree_port_file); }));
    // The tree goes to the agents' tree ports; direct calls to their gRPC ports.
    addresses_.push_back("127.0.0.1:" + std::to_string(std::stoi(read_file(tree_port_file))));
    stubs_.push_back(v1::Agent::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(std::stoi(read_file(port_file))),
                            grpc::InsecureChannelCredentials())));
  }

  grpc::Status call(
      size_t k, const std::function<grpc::Status(v1::Agent::Stub&, grpc::ClientContext&)>& rpc) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (Status ok = credentials_->attach(context); !ok)
      return grpc::Status(grpc::StatusCode::INTERNAL, ok.error().message);
    return rpc(*stubs_[k], context);
  }

  // Launches job `job` (a spinning shell and its spinning child) on agent k's node; its process
  // group, once it runs.
  pid_t launch_spinner(size_t k, int64_t job) {
    v1::LaunchRequest request;
    request.set_job_id(job);
    request.set_attempt(1);
    std::string node = "n" + std::to_string(k);
    request.add_nodes(node);
    request.set_nodelist(node);
    request.set_nnodes(1);
    for (const char* arg : {"/bin/sh", "-c", "(while :; do :; done) & while :; do :; done"})
      request.add_argv(arg);
    request.set_cwd(dir_.path());
    request.set_output("/dev/null");
    request.set_uid(static_cast<int>(::geteuid()));
    request.set_gid(static_cast<int>(::getegid()));
    v1::LaunchReply reply;
    grpc::Status status = call(k, [&](v1::Agent::Stub& stub, grpc::ClientContext& context) {
      return stub.Launch(&context, request, &reply);
    });
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::string pid_file = dir_ / ("agent-" + std::to_string(k) + "/tasks/" + std::to_string(job) +
                                   ".1.0." + node + ".pid");
    pid_t group = -1;
    eventually([&] {
      std::ifstream in(pid_file);
      pid_t shepherd = 0;
      return static_cast<bool>(in >> shepherd >> group);
    });
    groups_.push_back(group);
    return group;
  }

  SwitchOrder order(std::vector<std::string> agents, std::vector<int64_t> freeze,
                    std::vector<int64_t> thaw) {
    SwitchOrder o;
    o.agents = std::move(agents);
    for (int64_t j : freeze) o.freeze.push_back({j, 1});
    for (int64_t j : thaw) o.thaw.push_back({j, 1});
    return o;
  }

  testing::TempDir dir_;
  std::unique_ptr<MungeDaemon> munge_;
  std::unique_ptr<testing::ControllerServer> controller_;
  std::unique_ptr<CredentialSource> credentials_;
  std::unique_ptr<TreeSigner> signer_;
  std::unique_ptr<TreeChannel> channel_;
  std::unique_ptr<TreeSender> tree_;
  std::vector<std::unique_ptr<testing::ChildProcess>> agents_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<v1::Agent::Stub>> stubs_;
  std::vector<pid_t> groups_;
};

TEST_F(GangSwitchTest, TwoJobsAlternateOnEveryNodeThroughTheTree) {
  std::vector<pid_t> first, second;
  for (size_t k = 0; k < agents_.size(); ++k) {
    first.push_back(launch_spinner(k, 1));
    second.push_back(launch_spinner(k, 2));
    ASSERT_GT(first.back(), 0);
    ASSERT_GT(second.back(), 0);
  }
  SwitchSender sender(*tree_, {.fanout = 2, .deadline_seconds = 5});
  // Job 2 out first: from then on exactly one of the two runs on each node.
  v1::SwitchReply reply = sender.switch_through_tree(order(addresses_, {2}, {}), addresses_);
  EXPECT_EQ(reply.agents(), kAgents);
  EXPECT_EQ(reply.failed_size(), 0);
  EXPECT_EQ(reply.errors_size(), 0) << reply.errors(0);
  for (int round = 0; round < 4; ++round) {
    int64_t out = round % 2 == 0 ? 1 : 2, in = 3 - out;
    reply = sender.switch_through_tree(order(addresses_, {out}, {in}), addresses_);
    ASSERT_EQ(reply.agents(), kAgents);
    ASSERT_EQ(reply.errors_size(), 0) << reply.errors(0);
    // The reduction: one activity entry for the frozen job, summed over every node.
    ASSERT_EQ(reply.activity_size(), 1);
    EXPECT_EQ(reply.activity(0).job_id(), out);
    EXPECT_EQ(reply.activity(0).tasks(), kAgents);
    EXPECT_GE(reply.activity(0).processes(), 2 * kAgents);
    EXPECT_GT(reply.activity(0).running(), 0);  // it spun through its slot
    EXPECT_GT(reply.freeze_us(), 0);
    const std::vector<pid_t>& frozen = out == 1 ? first : second;
    const std::vector<pid_t>& thawed = out == 1 ? second : first;
    for (size_t k = 0; k < frozen.size(); ++k) {
      EXPECT_FALSE(seen_running(frozen[k], 10, std::chrono::milliseconds(3)))
          << "round " << round << " node " << k;
      EXPECT_TRUE(eventually([&] {
        return seen_running(thawed[k], 3, std::chrono::milliseconds(5));
      })) << "round "
          << round << " node " << k;
    }
  }
}

TEST_F(GangSwitchTest, AnOutgoingJobWhoseActivityIsNotWantedIsFrozenWithoutALook) {
  std::vector<pid_t> first, second;
  for (size_t k = 0; k < agents_.size(); ++k) {
    first.push_back(launch_spinner(k, 1));
    second.push_back(launch_spinner(k, 2));
    ASSERT_GT(first.back(), 0);
    ASSERT_GT(second.back(), 0);
  }
  SwitchSender sender(*tree_, {.fanout = 2, .deadline_seconds = 5});
  v1::SwitchReply reply = sender.switch_through_tree(order(addresses_, {2}, {}), addresses_);
  ASSERT_EQ(reply.errors_size(), 0) << reply.errors(0);
  // Job 1 out without a look: frozen on every node, no activity for it.
  SwitchOrder quiet = order(addresses_, {1}, {2});
  quiet.skip_activity.push_back({1, 1});
  reply = sender.switch_through_tree(quiet, addresses_);
  ASSERT_EQ(reply.agents(), kAgents);
  ASSERT_EQ(reply.errors_size(), 0) << reply.errors(0);
  EXPECT_EQ(reply.activity_size(), 0);
  for (size_t k = 0; k < first.size(); ++k)
    EXPECT_FALSE(seen_running(first[k], 10, std::chrono::milliseconds(3))) << "node " << k;
  // Job 2 out with a look, in the same switch as a skipped job 1 (frozen still): only job 2's.
  SwitchOrder both = order(addresses_, {2, 1}, {});
  both.skip_activity.push_back({1, 1});
  reply = sender.switch_through_tree(both, addresses_);
  ASSERT_EQ(reply.errors_size(), 0) << reply.errors(0);
  ASSERT_EQ(reply.activity_size(), 1);
  EXPECT_EQ(reply.activity(0).job_id(), 2);
  EXPECT_EQ(reply.activity(0).tasks(), kAgents);
  EXPECT_GT(reply.activity(0).running(), 0);
}

TEST_F(GangSwitchTest, AJobFrozenBeforeItsLaunchStartsFrozenAndTheAgentKeepsLaunching) {
  // The switch that freezes job 3 reaches the agents before its launch does (they travel on
  // different channels). Its tasks must start frozen, the launch must return, and the agents
  // must go on launching: a process that joined a frozen cgroup before its exec used to freeze
  // its shepherd with it, and every later launch on that agent hung.
  SwitchSender sender(*tree_, {.fanout = 2, .deadline_seconds = 5});
  v1::SwitchReply reply = sender.switch_through_tree(order(addresses_, {3}, {}), addresses_);
  ASSERT_EQ(reply.errors_size(), 0) << reply.errors(0);
  std::vector<pid_t> late, next;
  for (size_t k = 0; k < agents_.size(); ++k) late.push_back(launch_spinner(k, 3));
  for (size_t k = 0; k < agents_.size(); ++k) next.push_back(launch_spinner(k, 4));
  for (size_t k = 0; k < agents_.size(); ++k) {
    ASSERT_GT(late[k], 0);
    ASSERT_GT(next[k], 0);
    EXPECT_FALSE(seen_running(late[k], 10, std::chrono::milliseconds(3))) << "node " << k;
    EXPECT_TRUE(eventually([&] { return seen_running(next[k], 3, std::chrono::milliseconds(5)); }))
        << "node " << k;
  }
  // Thawed, it runs.
  reply = sender.switch_through_tree(order(addresses_, {}, {3}), addresses_);
  ASSERT_EQ(reply.errors_size(), 0) << reply.errors(0);
  for (size_t k = 0; k < agents_.size(); ++k)
    EXPECT_TRUE(eventually([&] { return seen_running(late[k], 3, std::chrono::milliseconds(5)); }))
        << "node " << k;
}

TEST_F(GangSwitchTest, ADeadAgentInTheMiddleOfTheTreeCostsOneDeadlineNotTheSwitch) {
  std::vector<pid_t> groups;
  for (size_t k = 0; k < agents_.size(); ++k) groups.push_back(launch_spinner(k, 1));
  // Fanout 2 over 7 agents: the root's first child (agent 1) has agents 2 and 3 below it.
  ASSERT_EQ(tree_children({addresses_.begin() + 1, addresses_.end()}, 2)[0].agent, addresses_[1]);
  agents_[1]->stop(SIGKILL);  // its job keeps running: the agent's shepherd outlives it
  SwitchSender sender(*tree_, {.fanout = 2, .deadline_seconds = 2, .keep_out_seconds = 60});
  auto start = std::chrono::steady_clock::now();
  v1::SwitchReply reply = sender.switch_through_tree(order(addresses_, {1}, {}), addresses_);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(reply.failed_size(), 1);
  EXPECT_EQ(reply.failed(0), addresses_[1]);
  EXPECT_EQ(reply.agents(), kAgents - 1);  // agents 2 and 3 were switched in a second tree
  // Not a hang: one deadline for the dead child, then the resend (bounded loosely: a noisy host).
  EXPECT_LT(took, 3 * 2.0);
  for (size_t k = 0; k < groups.size(); ++k) {
    if (k == 1) continue;
    EXPECT_FALSE(seen_running(groups[k], 10, std::chrono::milliseconds(3))) << "node " << k;
  }
  // The dead agent stays out of the next trees: no deadline is waited for again.
  SwitchOrder again = order(addresses_, {}, {1});
  std::atomic<bool> done = false;
  sender.on_done([&](const SwitchOutcome& o) {
    EXPECT_EQ(o.reply.agents(), kAgents - 1);
    EXPECT_EQ(o.reply.failed_size(), 0);
    done = true;
  });
  sender.send(again);
  EXPECT_TRUE(eventually([&] { return done.load(); }));
  for (size_t k = 0; k < groups.size(); ++k)
    EXPECT_TRUE(eventually([&] {
      return seen_running(groups[k], 3, std::chrono::milliseconds(5));
    })) << "node "
        << k;
  // The orphaned job on the dead agent's node is not this test's to leave behind.
  ::kill(-groups[1], SIGKILL);
}

#endif  // TRELLIS_AGENT_BINARY

}  // namespace
}  // namespace trellis
