// Real MPI programs on a live cluster (issue 31's Done-when): the allreduce program built with
// Debian's MPICH 4.0 (PMI-1) and Open MPI 4.1 (PMIx), each as a 4-node job and as 2 nodes x 2
// tasks, checked from every rank's own line; a run whose ranks are singletons fails the check.
// The cluster has two agents (2 nodes each), so every barrier crosses agents through the PMI
// exchange tree. Failures: MPI_Abort on rank 2, and rank 1 killed with SIGKILL while the others
// wait in MPI_Barrier: each job ends F, its reason names the rank, it ends well within the kill
// grace (the step's other ranks are killed at once, not when the grace runs out), and no rank's
// process is left (checked by the pids the ranks printed).
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>

#include "../mpi/mpi_programs.h"
#include "live_cluster.h"

namespace trellis::testing {
namespace {

// Long, so that a job that ended within it was stopped by the failure, not by SIGKILL at its end.
constexpr double kKillGrace = 20;

class MpiClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    programs_ = new TempDir();
    for (const MpiFlavour* f : {&kMpich, &kOpenMpi}) {
      std::string error;
      binaries_[f->name] = build_allreduce(*f, programs_->path(), error);
      ASSERT_FALSE(binaries_[f->name].empty()) << f->compiler << ": " << error;
    }
  }
  static void TearDownTestSuite() {
    delete programs_;
    programs_ = nullptr;
  }

  MpiClusterTest()
      : cluster_("--machine torus:2x2 --agents 2 --kill-grace " + std::to_string(kKillGrace)) {}

  // Runs the program as a job; its output file's text, and the job's id.
  std::pair<std::string, int64_t> run(const MpiFlavour& f, const std::string& layout,
                                      const std::string& mode = "") {
    std::string out = cluster_.dir() / ("out-" + f.name + "-%j.txt");
    std::string extra = f.name == "openmpi" ? kOpenMpiOnOneHost : "";
    const std::string mpi = f.mpi.empty() ? "" : " --mpi " + f.mpi;
    test::CommandRun r =
        cluster_.trellis("submit " + layout + mpi + " " + extra + " --wait -o " + out + " -D " +
                         programs_->path() + " -- " + binaries_[f.name] + " " + mode);
    size_t at = r.output.find("Submitted job ");
    int64_t id = at == std::string::npos ? -1 : std::stoll(r.output.substr(at + 14));
    std::string path = out;
    path.replace(path.find("%j"), 2, std::to_string(id));
    return {test::read_text(path) + "\n(submit said: " + r.output + ")", id};
  }

  static inline TempDir* programs_ = nullptr;
  static inline std::map<std::string, std::string> binaries_;
  LiveCluster cluster_;
};

TEST_F(MpiClusterTest, MpichAndOpenMpiWireUpAcrossNodesAndAgents) {
  ASSERT_EQ(cluster_.up().status, 0) << cluster_.up().output;
  for (const MpiFlavour* f : {&kMpich, &kOpenMpi}) {
    auto [four_nodes, id4] = run(*f, "-N 4");
    EXPECT_EQ(check_allreduce(four_nodes, 4), "") << f->name << " -N 4";
    EXPECT_EQ(cluster_.state(id4), "CD");
    auto [two_by_two, id22] = run(*f, "-N 2 -n 4");
    EXPECT_EQ(check_allreduce(two_by_two, 4), "") << f->name << " -N 2 -n 4";
    nlohmann::json job = cluster_.job(id22);
    EXPECT_EQ(job["ntasks"], 4);
    EXPECT_EQ(job["task_layout"].get<std::string>().find("0-1 "), 3u) << job.dump();
  }
}

// With --mpi unset the agent reads what each program links (daemon/program_libraries.h): MPICH's
// ranks get PMI-1 and Open MPI's PMIx, with no option (Open MPI's ranks died with "OPAL ERROR:
// Unreachable in ext3x_client.c" under the PMI-1-only default). An Open MPI program of one rank
// gets PMIx too: with SLURM_STEP_ID beside SLURM_NODELIST it takes itself for one that srun
// launched, and would fail the same way as a singleton.
TEST_F(MpiClusterTest, MpichAndOpenMpiWireUpWithNoMpiOption) {
  ASSERT_EQ(cluster_.up().status, 0) << cluster_.up().output;
  for (MpiFlavour f : {kMpich, kOpenMpi}) {
    f.mpi = "";
    auto [four_nodes, id4] = run(f, "-N 4");
    EXPECT_EQ(check_allreduce(four_nodes, 4), "") << f.name << " -N 4, no --mpi";
    EXPECT_EQ(cluster_.state(id4), "CD");
    auto [two_by_two, id22] = run(f, "-N 2 -n 4");
    EXPECT_EQ(check_allreduce(two_by_two, 4), "") << f.name << " -N 2 -n 4, no --mpi";
    auto [alone, id1] = run(f, "-N 1");
    EXPECT_EQ(check_allreduce(alone, 1), "") << f.name << " -N 1, no --mpi";
    EXPECT_EQ(cluster_.state(id1), "CD") << alone;
  }
}

// A one-task job of a program that links no MPI runs without a job shell: its parent is the
// agent's shepherd (one process for the job), while a job of two tasks, or of an MPI program, has
// a shell per node between them.
TEST_F(MpiClusterTest, AOneTaskJobWithoutMpiRunsWithoutAJobShell) {
  ASSERT_EQ(cluster_.up().status, 0) << cluster_.up().output;
  auto parent_of = [&](const std::string& options) {
    std::string out = cluster_.dir() / "parent-%j.txt";
    test::CommandRun r = cluster_.trellis("submit " + options + " --wait -o " + out +
                                          " -- sh -c 'cat /proc/$PPID/comm'");
    size_t at = r.output.find("Submitted job ");
    EXPECT_NE(at, std::string::npos) << r.output;
    const long long id = at == std::string::npos ? 0 : std::stoll(r.output.substr(at + 14));
    std::string path = out;
    path.replace(path.find("%j"), 2, std::to_string(id));
    return test::read_text(path);
  };
  EXPECT_EQ(parent_of("-N 1"), "trellis-shepher\n");
  EXPECT_EQ(parent_of("-N 1 --mpi none"), "trellis-shepher\n");
  EXPECT_EQ(parent_of("-N 1 --mpi pmi1"), "trellis-shell\n");
  EXPECT_EQ(parent_of("-N 1 --label"), "0: trellis-shell\n");
  EXPECT_EQ(parent_of("-N 1 -n 2"), "trellis-shell\ntrellis-shell\n");
}

TEST_F(MpiClusterTest, RanksStartedWithoutPmiAreSingletonsAndFailTheCheck) {
  ASSERT_EQ(cluster_.up().status, 0) << cluster_.up().output;
  // --mpi none: no PMI_FD, so MPICH runs each rank alone, as it would under a launcher that
  // does not wire ranks up. The check must see that.
  MpiFlavour none = kMpich;
  none.mpi = "none";
  auto [output, id] = run(none, "-N 4");
  std::vector<RankLine> lines = rank_lines(output);
  ASSERT_EQ(lines.size(), 4u) << output;
  for (const RankLine& l : lines) EXPECT_EQ(l.size, 1);
  EXPECT_NE(check_allreduce(output, 4), "");
  EXPECT_EQ(cluster_.state(id), "CD");
}

TEST_F(MpiClusterTest, AnAbortAndAKilledRankEndTheJobAndNameTheRank) {
  ASSERT_EQ(cluster_.up().status, 0) << cluster_.up().output;
  struct Case {
    const MpiFlavour* flavour;
    std::string mode;
    std::string reason;
  };
  for (const Case& c : {Case{&kMpich, "abort", "rank 2 on n2 called PMI abort (exit code 3)"},
                        Case{&kOpenMpi, "abort", "rank 2 on n2 called PMIx_Abort (status 3)"},
                        Case{&kMpich, "kill", "rank 1 on n1 was killed by signal 9 (SIGKILL)"},
                        Case{&kOpenMpi, "kill", "rank 1 on n1 was killed by signal 9 (SIGKILL)"}}) {
    auto [output, id] = run(*c.flavour, "-N 4", c.mode);
    nlohmann::json job = cluster_.job(id);
    ASSERT_TRUE(job.is_object()) << output;
    EXPECT_EQ(job["state"], "F") << c.flavour->name << " " << c.mode << ": " << job.dump();
    EXPECT_EQ(job["reason"].get<std::string>().rfind(c.reason, 0), 0u)
        << c.flavour->name << " " << c.mode << ": " << job["reason"];
    std::vector<RankLine> lines = rank_lines(output);
    ASSERT_EQ(lines.size(), 4u) << output;
    // The job ended well before the kill grace ran out after the failure (rank 1 dies a second
    // after its line; rank 2 aborts right after its line).
    long long failed_us = 0;
    for (const RankLine& l : lines) failed_us = std::max(failed_us, l.end_us);
    double ended = job["end_time"].get<double>();
    EXPECT_LT(ended - static_cast<double>(failed_us) / 1e6, kKillGrace) << job.dump();
    EXPECT_EQ(still_running(lines), std::vector<pid_t>{}) << output;
  }
}

// A batch-like job (one task, on its first node) whose script runs the two programs as two steps
// with `srun` (trellis under that name, found first in the job's PATH), then the same programs
// through their own launchers, mpiexec.mpich and mpirun.openmpi, which start their daemons on the
// job's 4 nodes through that srun.
TEST_F(MpiClusterTest, StepsOfAScriptAndTheLibrariesOwnLaunchersInsideAJob) {
  ASSERT_EQ(cluster_.up().status, 0) << cluster_.up().output;
  const std::string dir = programs_->path();
  std::string script = dir + "/steps.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                        << "srun -N 4 -o " << dir << "/step1.txt " << binaries_["mpich"] << "\n"
                        << "srun -N 2 -n 4 --mpi=pmix -o " << dir << "/step2.txt -- "
                        << binaries_["openmpi"] << "\n";
  ::chmod(script.c_str(), 0755);
  std::string ompi = " --env OMPI_MCA_pml=ob1 --env OMPI_MCA_btl=self,tcp";
  test::CommandRun r = cluster_.trellis("submit -N 4 -n 1 --wait -o " + dir + "/script.txt -D " +
                                        dir + ompi + " -- " + script);
  EXPECT_EQ(r.status, 0) << r.output << test::read_text(dir + "/script.txt");
  EXPECT_EQ(check_allreduce(test::read_text(dir + "/step1.txt"), 4), "") << "step 1 (MPICH)";
  EXPECT_EQ(check_allreduce(test::read_text(dir + "/step2.txt"), 4), "") << "step 2 (Open MPI)";
  size_t at = r.output.find("Submitted job ");
  ASSERT_NE(at, std::string::npos);
  nlohmann::json job = cluster_.job(std::stoll(r.output.substr(at + 14)));
  test::CommandRun shown = cluster_.trellis("show job " + std::to_string(job["id"].get<int64_t>()));
  EXPECT_NE(shown.output.find("Step=1 State=CD"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("Step=2 State=CD"), std::string::npos) << shown.output;

  // The libraries' own launchers, run once on the job's first node (1 task per node, 4 nodes).
  struct Launcher {
    std::string name, command, flavour, env;
  };
  for (const Launcher& l :
       {Launcher{"mpiexec.mpich", "mpiexec.mpich -n 4 ", "mpich", ""},
        Launcher{
            "mpirun.openmpi", "mpirun.openmpi -n 4 ", "openmpi",
            ompi + " --env OMPI_ALLOW_RUN_AS_ROOT=1 --env OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"}}) {
    std::string out = dir + "/" + l.name + ".txt";
    test::CommandRun launched =
        cluster_.trellis("submit -N 4 --mpi none --wait -o " + out + " -D " + dir + l.env +
                         " -- sh -c 'if [ $TRELLIS_NODEID = 0 ]; then exec " + l.command +
                         binaries_[l.flavour] + "; fi'");
    EXPECT_EQ(launched.status, 0) << l.name << ": " << launched.output << test::read_text(out);
    EXPECT_EQ(check_allreduce(test::read_text(out), 4), "") << l.name;
  }
}

}  // namespace
}  // namespace trellis::testing
