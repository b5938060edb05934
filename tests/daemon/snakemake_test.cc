// A real client, unchanged: snakemake 7.21 (Debian's) with --slurm drives a live Trellis cluster
// through the Slurm commands (sinfo -o %P for the partition, sacct for its account and for
// every status poll, sbatch --wrap for every rule, srun -n1 inside each job). A workflow of three
// dependent rules runs to completion, and a rule that fails is reported failed, not waited for.
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "../build_paths.h"
#include "../cli_run.h"
#include "live_cluster.h"

namespace trellis {
namespace {

using test::CommandRun;
using testing::LiveCluster;

namespace fs = std::filesystem;

class SnakemakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::run_command("command -v snakemake").status != 0)
      GTEST_SKIP() << "snakemake is not installed (scripts/bootstrap.sh installs it)";
    ASSERT_EQ(cluster_.up().status, 0) << cluster_.up().output;
  }
  // snakemake --slurm in `dir` (a workflow in dir/Snakefile), bounded in time: a hang fails.
  CommandRun snakemake(const fs::path& dir) {
    struct passwd* me = getpwuid(getuid());
    std::string bin = (fs::path(TRELLIS_BINARY).parent_path() / "slurm-bin").string();
    return test::run_command(
        "cd " + dir.string() + " && USER=" + (me ? me->pw_name : "root") +
        " TRELLIS_CONF=" + (cluster_.dir() / "trellis.toml") + " PATH=" + bin +
        ":$PATH timeout 240 snakemake --slurm --jobs 2 --max-status-checks-per-second 1 "
        "--default-resources runtime=5 mem_mb=100");
  }
  LiveCluster cluster_{"--machine flat:4"};
};

TEST_F(SnakemakeTest, RunsThreeDependentRulesToCompletionThroughTheSlurmCommands) {
  fs::path dir = cluster_.dir() / "workflow";
  fs::create_directories(dir);
  std::ofstream(dir / "Snakefile")
      << "rule all:\n"
         "    input: \"c.txt\"\n"
         "rule a:\n"
         "    output: \"a.txt\"\n"
         "    shell: \"echo a > {output}\"\n"
         "rule b:\n"
         "    input: \"a.txt\"\n"
         "    output: \"b.txt\"\n"
         "    shell: \"cat {input} > {output} && echo b >> {output}\"\n"
         "rule c:\n"
         "    input: \"b.txt\"\n"
         "    output: \"c.txt\"\n"
         "    shell: \"cat {input} > {output} && echo c >> {output}\"\n";
  CommandRun run = snakemake(dir);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(test::read_text(dir / "c.txt"), "a\nb\nc\n");
  // Each rule was a job of the cluster, named as snakemake names them, and completed.
  CommandRun jobs = cluster_.trellis("history -X -P -n -o JobName,State");
  for (const char* rule : {"snakejob_a_", "snakejob_b_", "snakejob_c_"})
    EXPECT_NE(jobs.output.find(rule), std::string::npos) << jobs.output;
  EXPECT_EQ(std::count(jobs.output.begin(), jobs.output.end(), '\n'), 3) << jobs.output;
  EXPECT_EQ(jobs.output.find("FAILED"), std::string::npos) << jobs.output;
}

TEST_F(SnakemakeTest, AFailingRuleIsReportedFailedNotWaitedFor) {
  fs::path dir = cluster_.dir() / "failing";
  fs::create_directories(dir);
  std::ofstream(dir / "Snakefile") << "rule all:\n"
                                      "    input: \"out.txt\"\n"
                                      "rule broken:\n"
                                      "    output: \"out.txt\"\n"
                                      "    shell: \"exit 1\"\n";
  CommandRun run = snakemake(dir);
  EXPECT_NE(run.status, 0) << run.output;
  EXPECT_NE(run.status, 124) << "snakemake hung (timed out):\n" << run.output;
  EXPECT_NE(run.output.find("Error in rule broken"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir / "out.txt"));
  CommandRun jobs = cluster_.trellis("history -X -P -n -o JobName,State");
  EXPECT_TRUE(std::regex_search(jobs.output, std::regex("snakejob_broken_[0-9]+\\|FAILED")))
      << jobs.output;
}

}  // namespace
}  // namespace trellis
