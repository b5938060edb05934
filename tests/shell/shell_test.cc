// The job shell (trellis-shell) run for real, one process per node of a step, with the agent's
// side of its socket played by a ShellSocket and a PmiExchangeHub in this process. The ranks are
// small sh scripts that speak PMI-1 on their PMI_FD: puts on every node, a barrier across nodes,
// gets of the other nodes' keys. Also: --label, exit codes and signals passed on, and a rank's
// failure ending the step on its node at once and on the other node when the agent drops the
// step (as it does when the failed node's tasks end): no rank is left waiting in a barrier.
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "../build_paths.h"
#include "../daemon/daemon_test_support.h"
#include "daemon/pmi_exchange.h"
#include "daemon/shell_socket.h"
#include "shell/exchange_wire.h"

extern char** environ;

namespace trellis {
namespace {

using testing::eventually;
using testing::read_lines;
using testing::TempDir;

// The PMI-1 client of each rank: a put, a barrier, a get of every rank's key.
constexpr const char* kPmiScript = R"sh(
fd=$PMI_FD
pmi() { printf '%s\n' "$1" >&$fd; IFS= read -r reply <&$fd; }
pmi "cmd=init pmi_version=1 pmi_subversion=1"
pmi "cmd=get_my_kvsname"; kvs=${reply##*kvsname=}
pmi "cmd=put kvsname=$kvs key=k$PMI_RANK value=v$PMI_RANK local $SLURM_LOCALID"
pmi "cmd=barrier_in"
line="rank $PMI_RANK of $PMI_SIZE local $SLURM_LOCALID"
r=0
while [ $r -lt $PMI_SIZE ]; do
  pmi "cmd=get kvsname=$kvs key=k$r"; line="$line|${reply##*value=}"; r=$((r+1))
done
echo "$line"
pmi "cmd=finalize"
)sh";

// The agent's end of the shells' socket, for one step of `nodes` nodes, all served here.
class FakeAgent {
 public:
  FakeAgent(const StepKey& step, std::vector<std::string> nodes)
      : step_(step),
        name_("trellis-test-shells-" + std::to_string(::getpid()) + "-" +
              std::to_string(counter_++)),
        hub_("self", [](const std::string&, const StepKey&, uint32_t, std::string,
                        PmiExchangeHub::Answer done) { done(fail("no parent in this test")); }) {
    StepPlan plan;
    plan.agents = {"self"};
    plan.local_nodes.insert(nodes.begin(), nodes.end());
    plan.uid = static_cast<int>(::getuid());
    hub_.expect(step, plan);
    ShellSocket::Handlers handlers;
    handlers.authorize = [this](const ShellSocket::Peer& peer, const StepKey& step,
                                const std::string& node) -> Status {
      std::lock_guard lock(mutex_);
      if (!(step == step_)) return fail("not this step");
      if (!shells_.contains(peer.pid)) return fail("not one of the shells started");
      (void)node;
      return Ok{};
    };
    handlers.contribute = [this](const StepKey& step, uint32_t round, const std::string& node,
                                 std::string data, PmiExchangeHub::Answer answer) {
      hub_.contribute_local(step, round, node, std::move(data), std::move(answer));
    };
    handlers.ended = [this](const StepKey&, const std::string& node, int exit_code, int signal,
                            const std::string& reason) {
      std::lock_guard lock(mutex_);
      ended_[node] = reason + " (" + std::to_string(exit_code) + "/" + std::to_string(signal) + ")";
    };
    socket_ = std::move(*ShellSocket::open(name_, handlers));
  }

  // Starts the shell of node `index` in its own process group, as the shepherd starts tasks.
  pid_t start_shell(const std::vector<std::string>& arguments, const std::string& output) {
    std::vector<std::string> args = {TRELLIS_SHELL_BINARY};
    args.insert(args.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    pid_t pid = -1;
    std::lock_guard lock(mutex_);  // before the shell can call: it is known when it does
    if (posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    shells_.insert(pid);
    return pid;
  }

  // What the shells' ranks left behind goes with their process groups (a shepherd would kill
  // the group when the shell ends).
  ~FakeAgent() {
    for (pid_t shell : shells_)
      if (shell > 0) ::kill(-shell, SIGKILL);
  }

  const std::string& name() const { return name_; }
  PmiExchangeHub& hub() { return hub_; }
  std::map<std::string, std::string> ended() {
    std::lock_guard lock(mutex_);
    return ended_;
  }

 private:
  static inline int counter_ = 0;
  StepKey step_;
  std::string name_;
  PmiExchangeHub hub_;
  std::mutex mutex_;
  std::set<pid_t> shells_;
  std::map<std::string, std::string> ended_;
  std::unique_ptr<ShellSocket> socket_;
};

std::vector<std::string> shell_arguments(const std::string& node, int index,
                                         const std::string& agent,
                                         const std::vector<std::string>& command,
                                         const std::string& tasks = "2(x2)",
                                         std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"--job",
                                "12",
                                "--attempt",
                                "1",
                                "--step",
                                "0",
                                "--node",
                                node,
                                "--node-index",
                                std::to_string(index),
                                "--nodes",
                                "n[0-1]",
                                "--tasks-per-node",
                                tasks,
                                "--agent",
                                agent,
                                "--kill-grace",
                                "1"};
  a.insert(a.end(), extra.begin(), extra.end());
  a.push_back("--");
  a.insert(a.end(), command.begin(), command.end());
  return a;
}

// Waits for a child and returns its wait status.
int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

TEST(JobShellTest, RanksOnTwoNodesExchangeThroughTheAgent) {
  TempDir dir;
  StepKey step{12, 1, 0};
  FakeAgent agent(step, {"n0", "n1"});
  pid_t n0 = agent.start_shell(shell_arguments("n0", 0, agent.name(), {"sh", "-c", kPmiScript}),
                               dir / "n0.out");
  pid_t n1 = agent.start_shell(shell_arguments("n1", 1, agent.name(), {"sh", "-c", kPmiScript}),
                               dir / "n1.out");
  int s0 = wait_for(n0), s1 = wait_for(n1);
  ASSERT_TRUE(WIFEXITED(s0) && WEXITSTATUS(s0) == 0) << testing::read_file(dir / "n0.out");
  ASSERT_TRUE(WIFEXITED(s1) && WEXITSTATUS(s1) == 0) << testing::read_file(dir / "n1.out");
  std::vector<std::string> lines = read_lines(dir / "n0.out");
  for (const std::string& l : read_lines(dir / "n1.out")) lines.push_back(l);
  std::sort(lines.begin(), lines.end());
  const std::string all = "|v0 local 0|v1 local 1|v2 local 0|v3 local 1";
  EXPECT_EQ(lines,
            (std::vector<std::string>{"rank 0 of 4 local 0" + all, "rank 1 of 4 local 1" + all,
                                      "rank 2 of 4 local 0" + all, "rank 3 of 4 local 1" + all}));
  EXPECT_EQ(agent.hub().rounds_completed(), 1);
  EXPECT_TRUE(agent.ended().empty());  // nothing failed
}

TEST(JobShellTest, LabelsLinesWithTheRank) {
  TempDir dir;
  FakeAgent agent({12, 1, 0}, {"n0"});
  pid_t shell = agent.start_shell(
      shell_arguments("n0", 0, agent.name(), {"sh", "-c", "printf 'a\\nb' ; echo c >&2; echo d"},
                      "3,0", {"--label"}),
      dir / "out");
  ASSERT_EQ(wait_for(shell), 0) << testing::read_file(dir / "out");
  std::vector<std::string> lines = read_lines(dir / "out");
  std::multiset<std::string> got(lines.begin(), lines.end());
  // "b" has no newline of its own: "d" follows it on that line, as the rank wrote them.
  for (const char* rank : {"0", "1", "2"}) {
    EXPECT_EQ(got.count(std::string(rank) + ": a"), 1u) << rank;
    EXPECT_EQ(got.count(std::string(rank) + ": bd"), 1u) << rank;
    EXPECT_EQ(got.count(std::string(rank) + ": c"), 1u) << rank;
  }
}

// More ranks on a node than CPUs to run them: like mpirun, the shell tells Open MPI's ranks to
// yield while they wait instead of polling, unless the job chose; as many ranks as CPUs: nothing.
TEST(JobShellTest, RanksThatOutnumberTheCpusAreToldToYield) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  const int cpus = CPU_COUNT(&set);
  auto yield_values = [&](int ranks, std::vector<std::string> command) {
    TempDir dir;
    FakeAgent agent({12, 1, 0}, {"n0"});
    pid_t shell = agent.start_shell(
        shell_arguments("n0", 0, agent.name(), command, std::to_string(ranks) + ",0"), dir / "out");
    EXPECT_EQ(wait_for(shell), 0) << testing::read_file(dir / "out");
    std::vector<std::string> lines = read_lines(dir / "out");
    return std::multiset<std::string>(lines.begin(), lines.end());
  };
  auto copies = [](int n, const std::string& line) {
    std::vector<std::string> lines(static_cast<size_t>(n), line);
    return std::multiset<std::string>(lines.begin(), lines.end());
  };
  const std::vector<std::string> print = {"sh", "-c",
                                          "echo \"yield=${OMPI_MCA_mpi_yield_when_idle-unset}\""};
  EXPECT_EQ(yield_values(cpus + 1, print), copies(cpus + 1, "yield=1"));
  EXPECT_EQ(yield_values(cpus, print), copies(cpus, "yield=unset"));
  // The job's environment (the shell's own) chose: it stays.
  ::setenv("OMPI_MCA_mpi_yield_when_idle", "0", 1);
  std::multiset<std::string> chosen = yield_values(cpus + 1, print);
  ::unsetenv("OMPI_MCA_mpi_yield_when_idle");
  EXPECT_EQ(chosen, copies(cpus + 1, "yield=0"));
}

// An MPI step's ranks load the node's topology from the file the shell keeps
// (shell/node_topology.h) instead of each discovering it, without hwloc's plugins; a step without
// MPI is left alone, and a job that names its own file, or its own plugins, keeps its choice.
TEST(JobShellTest, MpiRanksAreGivenTheNodesTopologyFile) {
  auto seen = [&](const std::vector<std::string>& extra) {
    TempDir dir;
    FakeAgent agent({12, 1, 0}, {"n0"});
    pid_t shell = agent.start_shell(
        shell_arguments("n0", 0, agent.name(),
                        {"sh", "-c",
                         "echo \"${HWLOC_XMLFILE-unset} ${HWLOC_THISSYSTEM-unset} "
                         "${HWLOC_PLUGINS_BLACKLIST-unset}\""},
                        "1,0", extra),
        dir / "out");
    EXPECT_EQ(wait_for(shell), 0) << testing::read_file(dir / "out");
    std::vector<std::string> lines = read_lines(dir / "out");
    return lines.size() == 1 ? lines[0] : "lines: " + std::to_string(lines.size());
  };
  // The file, and hwloc's plugins (none of which reads XML with HWLOC_XMLFILE set) left out.
  const std::string plugins = " 1 hwloc_xml_libxml,hwloc_pci,hwloc_opencl,hwloc_gl";
  std::string mpi = seen({});
  ASSERT_TRUE(mpi.starts_with("/tmp/trellis-topology.") && mpi.ends_with(".xml" + plugins)) << mpi;
  std::string xml = testing::read_file(mpi.substr(0, mpi.size() - plugins.size()));
  EXPECT_NE(xml.find("<topology"), std::string::npos) << xml.substr(0, 200);
  EXPECT_NE(xml.find("type=\"PU\""), std::string::npos) << xml.substr(0, 200);
  EXPECT_EQ(seen({"--mpi", "none"}), "unset unset unset");
  ::setenv("HWLOC_XMLFILE", "/site/topology.xml", 1);
  std::string own = seen({});
  ::unsetenv("HWLOC_XMLFILE");
  EXPECT_EQ(own, "/site/topology.xml unset unset");
  // A job that chose its plugins (here: all of them) keeps its choice.
  ::setenv("HWLOC_PLUGINS_BLACKLIST", "", 1);
  std::string all_plugins = seen({});
  ::unsetenv("HWLOC_PLUGINS_BLACKLIST");
  EXPECT_TRUE(all_plugins.ends_with(".xml 1 ")) << all_plugins;
}

// The PMIx server's directory (libpmix's job-data store, mapped by every local rank) is in
// memory where /dev/shm is a tmpfs, and goes when its shell ends; one that a shell killed with
// SIGKILL left behind is removed by the next shell of its user, one of a live shell is kept.
TEST(JobShellTest, ThePmixServersDirectoryIsInMemoryAndNoneOutlivesItsShell) {
  struct statfs fs {};
  const bool memory =
      ::statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC && ::access("/dev/shm", W_OK) == 0;
  const std::string base = memory ? "/dev/shm" : "/tmp";
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  wait_for(dead);
  const std::string left = base + "/trellis-pmix-99.0.n7." + std::to_string(dead) + ".AbCdEf";
  const std::string live = base + "/trellis-pmix-99.0.n7." + std::to_string(::getpid()) + ".GhIjKl";
  for (const std::string& d : {left, live}) {
    std::filesystem::create_directories(d + "/inside");
    std::ofstream(d + "/inside/store") << "x";
  }
  TempDir dir;
  FakeAgent agent({12, 1, 0}, {"n0"});
  pid_t shell = agent.start_shell(
      shell_arguments("n0", 0, agent.name(), {"sh", "-c", "echo \"$PMIX_SERVER_TMPDIR\""}, "1(x2)",
                      {"--mpi", "pmix"}),
      dir / "out");
  EXPECT_EQ(wait_for(shell), 0) << testing::read_file(dir / "out");
  std::vector<std::string> lines = read_lines(dir / "out");
  ASSERT_EQ(lines.size(), 1u) << testing::read_file(dir / "out");
  EXPECT_TRUE(lines[0].starts_with(base + "/trellis-pmix-12.0.n0." + std::to_string(shell) + "."))
      << lines[0];
  EXPECT_FALSE(std::filesystem::exists(lines[0]));  // the shell's own, gone with it
  EXPECT_FALSE(std::filesystem::exists(left));
  EXPECT_TRUE(std::filesystem::exists(live + "/inside/store"));
  std::filesystem::remove_all(live);
}

// libpmix's shared-memory store is made of smaller segments than its defaults (zeroing 8 MiB
// per step was half the shell's CPU); server and ranks read the sizes from their environments,
// so the ranks are given the shell's. A size the job chose is kept. (MpiClusterTest runs Open
// MPI ranks on them.)
TEST(JobShellTest, PmixRanksSeeTheStoresSegmentSizesAndAJobsOwnAreKept) {
  auto seen = [&] {
    TempDir dir;
    FakeAgent agent({12, 1, 0}, {"n0"});
    pid_t shell = agent.start_shell(
        shell_arguments(
            "n0", 0, agent.name(),
            {"sh", "-c", "echo \"${NS_DATA_SEG_SIZE-unset} ${NS_META_SEG_SIZE-unset}\""}, "1(x2)",
            {"--mpi", "pmix"}),
        dir / "out");
    EXPECT_EQ(wait_for(shell), 0) << testing::read_file(dir / "out");
    std::vector<std::string> lines = read_lines(dir / "out");
    return lines.size() == 1 ? lines[0] : testing::read_file(dir / "out");
  };
  EXPECT_EQ(seen(), "1048576 262144");
  ::setenv("NS_DATA_SEG_SIZE", "8388608", 1);
  std::string own = seen();
  ::unsetenv("NS_DATA_SEG_SIZE");
  EXPECT_EQ(own, "8388608 262144");
}

TEST(JobShellTest, AFailedRankEndsTheStepOnItsNodeWithItsStatus) {
  TempDir dir;
  FakeAgent agent({12, 1, 0}, {"n0"});
  // Rank 1 exits 3; ranks 0 and 2 would sleep for a minute.
  pid_t shell = agent.start_shell(
      shell_arguments("n0", 0, agent.name(),
                      {"sh", "-c", "if [ $TRELLIS_PROCID = 1 ]; then exit 3; fi; exec sleep 60"},
                      "3,0"),
      dir / "out");
  int status = wait_for(shell);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_EQ(agent.ended()["n0"], "rank 1 on n0 exited with exit code 3 (3/0)");
  EXPECT_NE(testing::read_file(dir / "out").find("rank 1 on n0 exited with exit code 3"),
            std::string::npos);
  // The sleeping ranks were in the shell's process group, which nothing holds any more.
  EXPECT_TRUE(eventually([&] { return ::kill(-shell, 0) != 0; }));
}

TEST(JobShellTest, ASignalledRankEndsTheShellWithThatSignal) {
  TempDir dir;
  FakeAgent agent({12, 1, 0}, {"n0"});
  pid_t shell = agent.start_shell(
      shell_arguments("n0", 0, agent.name(), {"sh", "-c", "kill -USR2 $$"}, "1,0"), dir / "out");
  int status = wait_for(shell);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGUSR2);
  EXPECT_NE(agent.ended()["n0"].find("killed by signal 12 (SIGUSR2)"), std::string::npos);
}

TEST(JobShellTest, AMalformedPmiLineEndsOnlyThatStep) {
  TempDir dir;
  FakeAgent agent({12, 1, 0}, {"n0"});
  pid_t shell = agent.start_shell(
      shell_arguments("n0", 0, agent.name(),
                      // It stays for its answer (its SIGTERM is ignored): SIGKILL after the grace.
                      {"sh", "-c",
                       "trap '' TERM; printf 'hello there\\n' >&$PMI_FD; "
                       "IFS= read -r r <&$PMI_FD; echo \"got $r\"; sleep 60"},
                      "1,0"),
      dir / "out");
  int status = wait_for(shell);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::string out = testing::read_file(dir / "out");
  EXPECT_NE(out.find("got cmd=error rc=-1"), std::string::npos) << out;
  EXPECT_NE(agent.ended()["n0"].find("rank 0 on n0 sent a malformed PMI line"), std::string::npos)
      << agent.ended()["n0"];
}

TEST(JobShellTest, ARankDyingWhileOthersWaitInABarrierLeavesNobodyWaiting) {
  TempDir dir;
  StepKey step{12, 1, 0};
  FakeAgent agent(step, {"n0", "n1"});
  // Node 0's ranks reach the barrier; on node 1, rank 3 is killed before it does.
  std::string script = std::string("if [ $PMI_RANK = 3 ]; then kill -KILL $$; fi\n") + kPmiScript;
  pid_t n0 = agent.start_shell(shell_arguments("n0", 0, agent.name(), {"sh", "-c", script}),
                               dir / "n0.out");
  pid_t n1 = agent.start_shell(shell_arguments("n1", 1, agent.name(), {"sh", "-c", script}),
                               dir / "n1.out");
  int s1 = wait_for(n1);
  ASSERT_TRUE(WIFSIGNALED(s1) && WTERMSIG(s1) == SIGKILL) << s1;
  EXPECT_NE(agent.ended()["n1"].find("rank 3 on n1 was killed by signal 9"), std::string::npos);
  // The agent of a real step learns this from node 1's exit and drops the step's exchange.
  agent.hub().finished(step, "its tasks on this agent have ended");
  int s0 = wait_for(n0);
  ASSERT_TRUE(WIFEXITED(s0));
  EXPECT_EQ(WEXITSTATUS(s0), 1);
  EXPECT_NE(agent.ended()["n0"].find("the PMI exchange of n0 failed"), std::string::npos)
      << agent.ended()["n0"];
  EXPECT_TRUE(eventually([&] { return ::kill(-n0, 0) != 0 && ::kill(-n1, 0) != 0; }));
}

TEST(JobShellTest, AShellOfAnotherStepIsRefused) {
  TempDir dir;
  FakeAgent agent({12, 1, 0}, {"n0"});
  // This shell claims step 5 of job 12, which the agent did not start: its barrier fails.
  std::vector<std::string> args =
      shell_arguments("n0", 0, agent.name(), {"sh", "-c", kPmiScript}, "1,1");
  args[5] = "5";  // --step
  pid_t shell = agent.start_shell(args, dir / "out");
  int status = wait_for(shell);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_NE(testing::read_file(dir / "out").find("not this step"), std::string::npos)
      << testing::read_file(dir / "out");
}

TEST(JobShellTest, BadArgumentsAreRefusedWithTheirName) {
  TempDir dir;
  FakeAgent agent({12, 1, 0}, {"n0"});
  std::vector<std::string> args =
      shell_arguments("n0", 0, agent.name(), {"true"}, "1,1", {"--color", "red"});
  pid_t shell = agent.start_shell(args, dir / "out");
  int status = wait_for(shell);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2);
  EXPECT_NE(testing::read_file(dir / "out").find("unknown argument '--color'"), std::string::npos);
}

}  // namespace
}  // namespace trellis
