// Gang scheduling on a live cluster (trellis cluster up with a gang policy): real trellisd, a real
// agent, real processes frozen and thawed. What is checked is what /proc shows of the jobs'
// processes, never the daemons' own word: a frozen job is never seen running, two shared jobs
// take turns, a job that waits for input is skipped and comes back when its input arrives, a job
// deadlocked on messages is reported, and a controller killed and restarted keeps every job.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "../build_paths.h"
#include "daemon/proc_stat.h"
#include "live_cluster.h"

#if defined(TRELLIS_BINARY) && defined(TRELLISD_BINARY)

namespace trellis {
namespace {

using testing::eventually;
using testing::LiveCluster;

// Spins on the CPU on each of its nodes until it is cancelled.
const std::string kSpin = "-- sh -c 'while :; do :; done'";

class LiveGangTest : public ::testing::Test {
 protected:
  // A 2x2 mesh (4 nodes, one agent), DQT, slices of 0.25 s.
  LiveGangTest() : cluster_("--machine mesh:2x2 --policy dqt-ffapa --slice 0.25") {}

  void SetUp() override { ASSERT_EQ(cluster_.up().status, 0) << cluster_.up().output; }

  void TearDown() override {
    // Every job is cancelled and seen gone: frozen ones are thawed to take the signal.
    std::string command = "cancel";
    for (int64_t id : jobs_) command.append(" ").append(std::to_string(id));
    if (!jobs_.empty()) cluster_.trellis(command);
    for (int64_t id : jobs_)
      EXPECT_TRUE(eventually([&] { return cluster_.state(id) == "CA"; }, std::chrono::seconds(20)))
          << "job " << id;
    for (pid_t group : groups_)
      EXPECT_TRUE(eventually([&] { return processes_in_group(group).empty(); }));
  }

  int64_t submit(const std::string& args, bool share = true) {
    int64_t id = cluster_.submit(std::string("--nodes 4 ") + (share ? "--share " : "") + args);
    EXPECT_GT(id, 0);
    jobs_.push_back(id);
    return id;
  }

  // The process group of the job's task on each node, once all four run.
  std::vector<pid_t> groups_of(int64_t job) {
    std::vector<pid_t> groups;
    EXPECT_TRUE(eventually(
        [&] {
          groups.clear();
          for (int node = 0; node < 4; ++node) {
            std::ifstream in(cluster_.dir() / ("agent-0/tasks/" + std::to_string(job) + ".1.0.n" +
                                               std::to_string(node) + ".pid"));
            pid_t shepherd = 0, group = 0;
            if (!(in >> shepherd >> group)) return false;
            groups.push_back(group);
          }
          return true;
        },
        std::chrono::seconds(20)))
        << "job " << job << " did not start";
    groups_.insert(groups_.end(), groups.begin(), groups.end());
    return groups;
  }

  // Whether a thread of a process of the groups is on a CPU or waiting for one ('R').
  static bool running(const std::vector<pid_t>& groups) {
    for (pid_t group : groups)
      for (pid_t pid : processes_in_group(group))
        if (Result<ProcStat> s = read_proc_stat(pid); s && s->state == 'R') return true;
    return false;
  }

  // Samples `a` and `b` for at least `seconds`, and on until each has been seen running alone
  // `enough` times (for at most 60 s: a loaded host slows the sampling, never the verdict): how
  // often each was seen running alone, and how often both were seen running with no switch between
  // (a, then b, then a again, all running: a switch freezes the outgoing job before it thaws the
  // incoming one, so that needs two switches within one sample, with slices of 0.25 s: samples
  // that took over 50 ms are left out).
  struct Turns {
    int a_alone = 0, b_alone = 0, both = 0;
  };
  static Turns sample_turns(const std::vector<pid_t>& a, const std::vector<pid_t>& b,
                            double seconds, int enough) {
    Turns turns;
    auto start = std::chrono::steady_clock::now();
    auto at_least = start + std::chrono::duration<double>(seconds);
    auto at_most = start + std::chrono::seconds(60);
    for (auto now = start;
         now < at_least || ((turns.a_alone < enough || turns.b_alone < enough) && now < at_most);
         now = std::chrono::steady_clock::now()) {
      auto began = std::chrono::steady_clock::now();
      bool a_first = running(a), b_now = running(b), a_again = running(a);
      // A sample this test's thread took long over (a loaded host descheduled it) may span two
      // switches: it says nothing either way.
      if (std::chrono::steady_clock::now() - began > std::chrono::milliseconds(50)) continue;
      if (a_first && b_now && a_again) ++turns.both;
      if (a_first && a_again && !b_now) ++turns.a_alone;
      if (!a_first && !a_again && b_now) ++turns.b_alone;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return turns;
  }

  // The CPU time the groups' processes have used so far, in clock ticks: a progress counter the
  // kernel keeps for every job.
  static long long progress(const std::vector<pid_t>& groups) {
    long long ticks = 0;
    for (pid_t group : groups)
      for (pid_t pid : processes_in_group(group))
        if (Result<ProcStat> s = read_proc_stat(pid)) ticks += s->cpu_ticks;
    return ticks;
  }

  bool idle(int64_t job) {
    nlohmann::json j = cluster_.job(job);
    return j.is_object() && j["idle"].get<bool>();
  }

  double frozen_seconds(int64_t job) {
    nlohmann::json j = cluster_.job(job);
    return j.is_object() ? j["seconds_frozen"].get<double>() : -1;
  }

  testing::ExclusiveHostLock exclusive_;  // taken before the cluster starts, held to its end
  LiveCluster cluster_;
  std::vector<int64_t> jobs_;
  std::vector<pid_t> groups_;
};

TEST_F(LiveGangTest, TwoSharedJobsTakeTurnsAndAFrozenJobIsNeverSeenRunning) {
  int64_t a = submit(kSpin);
  int64_t b = submit(kSpin);
  std::vector<pid_t> on_a = groups_of(a), on_b = groups_of(b);
  // A launch that a switch freezing the job overtook runs thawed until its tasks have started
  // (the agent refreezes it then): sampling starts two slices after the tasks are seen.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Turns turns = sample_turns(on_a, on_b, 4, 21);
  EXPECT_EQ(turns.both, 0) << "both jobs ran at once";
  EXPECT_GT(turns.a_alone, 20);
  EXPECT_GT(turns.b_alone, 20);
  // The queue shows the switched-out one as S in its gang slot, and each has been frozen.
  test::CommandRun queue = cluster_.trellis("queue");
  EXPECT_NE(queue.output.find(" S "), std::string::npos) << queue.output;
  EXPECT_NE(queue.output.find("gang:0"), std::string::npos) << queue.output;
  EXPECT_GT(frozen_seconds(a), 0.5);
  EXPECT_GT(frozen_seconds(b), 0.5);
  test::CommandRun shown = cluster_.trellis("show job " + std::to_string(a));
  EXPECT_NE(shown.output.find("FrozenTime="), std::string::npos) << shown.output;
  // Each job's own progress counter stands still while the other's advances, and both advance
  // over time: read every 50 ms (a fifth of a slice) until each has been seen advancing alone 6
  // times and has run for more than 0.5 s (ticks of 10 ms), for at most 60 s.
  int a_only = 0, b_only = 0;
  long long a_before = progress(on_a), b_before = progress(on_b);
  const long long a_start = a_before, b_start = b_before;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < end &&
         (a_only <= 5 || b_only <= 5 || a_before - a_start <= 50 || b_before - b_start <= 50)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    long long a_now = progress(on_a), b_now = progress(on_b);
    a_only += a_now > a_before && b_now == b_before;
    b_only += b_now > b_before && a_now == a_before;
    a_before = a_now;
    b_before = b_now;
  }
  EXPECT_GT(a_only, 5);
  EXPECT_GT(b_only, 5);
  EXPECT_GT(a_before - a_start, 50);
  EXPECT_GT(b_before - b_start, 50);
}

TEST_F(LiveGangTest, AJobWithoutShareWaitsForWholeNodesThenIsNeverFrozen) {
  int64_t shared = submit(kSpin);
  groups_of(shared);
  int64_t exclusive = submit(kSpin, /*share=*/false);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // six slices
  EXPECT_EQ(cluster_.state(exclusive), "PD") << "it waits for the shared job's nodes";
  cluster_.trellis("cancel " + std::to_string(shared));
  std::vector<pid_t> on_exclusive = groups_of(exclusive);
  int64_t later = submit(kSpin);
  // Sampled for 2 s (eight slices): always running, while the later shared job waits.
  int seen = 0, running_seen = 0;
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < end) {
    ++seen;
    running_seen += running(on_exclusive);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(running_seen, seen) << "the job without --share was switched out";
  EXPECT_EQ(cluster_.state(later), "PD");
  EXPECT_EQ(frozen_seconds(exclusive), 0);
  cluster_.trellis("cancel " + std::to_string(exclusive));
  groups_of(later);  // it starts once the nodes are free
}

TEST_F(LiveGangTest, AJobWaitingForInputIsSkippedUntilItsInputArrives) {
  // Each node's task reads a FIFO of its own (kept in a directory apart: `cluster down` must not
  // trip over them either).
  const std::string fifos = cluster_.dir() / "input";
  std::filesystem::create_directories(fifos);
  for (int node = 0; node < 4; ++node)
    ASSERT_EQ(::mkfifo((fifos + "/fifo." + std::to_string(node)).c_str(), 0600), 0);
  int64_t waiting =
      submit("-- sh -c 'read x < " + fifos + "/fifo.$TRELLIS_NODEID; while :; do :; done'");
  int64_t busy = submit(kSpin);
  std::vector<pid_t> on_waiting = groups_of(waiting), on_busy = groups_of(busy);
  // Found idle at its switches: skipped, so the busy job runs every slot.
  ASSERT_TRUE(eventually([&] { return idle(waiting); }, std::chrono::seconds(20)))
      << cluster_.trellis("queue").output;
  double frozen = frozen_seconds(busy);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_NEAR(frozen_seconds(busy), frozen, 0.3) << "the busy job was switched out";
  EXPECT_FALSE(running(on_waiting));
  // The input arrives (a writer opens each FIFO its reader waits on).
  for (int node = 0; node < 4; ++node) {
    std::string fifo = fifos + "/fifo." + std::to_string(node);
    int fd = -1;
    ASSERT_TRUE(
        eventually([&] { return (fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK)) >= 0; }));
    ASSERT_EQ(::write(fd, "go\n", 3), 3);
    ::close(fd);
  }
  // It runs again (a probe sees it), rejoins the rotation, and the two take turns.
  EXPECT_TRUE(eventually([&] { return !idle(waiting); }, std::chrono::seconds(20)));
  // (A woken idle job runs beside the other until the switch that freezes it lands: by design,
  // since an idle job is left thawed so that a probe can see it wake. Then they take turns.)
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Turns turns = sample_turns(on_waiting, on_busy, 3, 11);
  EXPECT_EQ(turns.both, 0);
  EXPECT_GT(turns.a_alone, 10);
  EXPECT_GT(turns.b_alone, 10);
}

#ifdef TRELLIS_RUNTIME_PROBE_BINARY
TEST_F(LiveGangTest, AJobWhoseProcessesAllWaitForMessagesIsReportedGloballyStopped) {
  // Every process of the job announces a wait for a message and blocks: nothing can wake it.
  int64_t stuck = submit(std::string("-- ") + TRELLIS_RUNTIME_PROBE_BINARY + " wait-message");
  int64_t other = submit(kSpin);
  groups_of(stuck);
  groups_of(other);
  EXPECT_TRUE(eventually(
      [&] {
        nlohmann::json j = cluster_.job(stuck);
        return j.is_object() &&
               j["reason"].get<std::string>().find("globally stopped") != std::string::npos;
      },
      // Generous: under ASan beside other live tests the detection once took longer than 20 s.
      std::chrono::seconds(60)))
      << cluster_.trellis("show job " + std::to_string(stuck)).output;
  // The other job is not: it computes.
  EXPECT_EQ(cluster_.job(other)["reason"].get<std::string>().find("globally stopped"),
            std::string::npos);
}
#endif

TEST_F(LiveGangTest, AControllerKilledAndRestartedKeepsEverySharedJob) {
  int64_t a = submit(kSpin);
  int64_t b = submit(kSpin);
  std::vector<pid_t> on_a = groups_of(a), on_b = groups_of(b);
  ASSERT_TRUE(eventually([&] { return frozen_seconds(a) > 0.5 && frozen_seconds(b) > 0.5; },
                         std::chrono::seconds(20)));
  ::kill(cluster_.pid_of("trellisd"), SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  testing::ChildProcess restarted({TRELLISD_BINARY, "--conf", cluster_.dir() / "trellis.toml"},
                                  cluster_.dir() / "trellisd.log");
  std::ofstream(cluster_.dir() / "trellisd.pid") << restarted.pid() << "\n";
  ASSERT_TRUE(eventually([&] { return cluster_.job(a).is_object(); }, std::chrono::seconds(20)));
  // The same attempt of each job, on the same processes, taking turns again.
  for (int64_t id : {a, b}) {
    nlohmann::json j = cluster_.job(id);
    EXPECT_EQ(j["attempt"].get<int>(), 1) << "job " << id;
    std::string state = j["state"].get<std::string>();
    EXPECT_TRUE(state == "R" || state == "S") << "job " << id << " is " << state;
  }
  EXPECT_EQ(groups_of(a), on_a);
  EXPECT_EQ(groups_of(b), on_b);
  Turns turns = sample_turns(on_a, on_b, 3, 11);
  EXPECT_EQ(turns.both, 0);
  EXPECT_GT(turns.a_alone, 10);
  EXPECT_GT(turns.b_alone, 10);
  // The restarted controller is stopped by `cluster down` through the pid file; the jobs are
  // cancelled first (TearDown), while it runs.
  TearDown();
  jobs_.clear();
  groups_.clear();
}

}  // namespace
}  // namespace trellis

#endif
