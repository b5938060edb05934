// srun (the trellis binary called by that name, cli/slurm/srun.cc) runs one task inside a job
// itself, as workflow managers need (snakemake's srun -n1), and hands everything else to
// `trellis run`, a job step wired with PMI: an srun -n 4 that ran its command here would be four
// ranks run as one singleton. No cluster is running: `trellis run` fails at once, saying so, which
// is how these tests see that srun went there instead of running the command.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "build_paths.h"
#include "cli_run.h"

namespace trellis {
namespace {

// srun ARGS inside job 7 (SLURM_JOB_ID set) or outside any job, with a config that does not
// exist, so that `trellis run` cannot reach a cluster.
test::CommandRun srun(const std::string& args, bool inside_job) {
  const std::string srun_path =
      (std::filesystem::path(TRELLIS_BINARY).parent_path() / "slurm-bin" / "srun").string();
  std::string env =
      "env -u SLURM_JOB_ID -u TRELLIS_JOB_ID -u TRELLIS_CONTROLLERS "
      "TRELLIS_CONF=/nonexistent/trellis.toml ";
  if (inside_job) env += "SLURM_JOB_ID=7 ";
  return test::run_command(env + srun_path + " " + args);
}

bool went_to_trellis_run(const test::CommandRun& r) {
  return r.status != 0 && test::contains(r, "trellis run: error:");
}

TEST(SrunChoiceTest, OneTaskInsideAJobRunsTheCommandHereWithItsArgumentsAsGiven) {
  for (const char* options : {"", "-n1", "-n 1 -N 1", "--ntasks=1 --cpu-bind=q", "-N1 -c 2"}) {
    test::CommandRun r = srun(std::string(options) + " printf '%s|' a 'b c' -n", true);
    EXPECT_EQ(r.status, 0) << options << ": " << r.output;
    EXPECT_EQ(r.output, "a|b c|-n|") << options;
  }
  // The command's exit status is srun's.
  EXPECT_EQ(srun("-n1 sh -c 'exit 3'", true).status, 3);
}

TEST(SrunChoiceTest, SeveralTasksNodesOrStepOptionsAreAStepOfTrellisRun) {
  for (const char* options : {"-n 4", "-N 2", "--ntasks=2", "-n1 -N 3", "-l -n1", "--mpi=pmix",
                              "-w n1", "--ntasks-per-node=2", "-o out.txt"}) {
    test::CommandRun r = srun(std::string(options) + " echo ran-here", true);
    EXPECT_TRUE(went_to_trellis_run(r)) << options << ": " << r.output;
    EXPECT_FALSE(test::contains(r, "ran-here")) << options << ": ran as a singleton";
  }
}

TEST(SrunChoiceTest, OutsideAJobSrunAllocatesThroughTrellisRun) {
  test::CommandRun r = srun("-n1 echo ran-here", false);
  EXPECT_TRUE(went_to_trellis_run(r)) << r.output;
  EXPECT_FALSE(test::contains(r, "ran-here")) << r.output;
}

}  // namespace
}  // namespace trellis
