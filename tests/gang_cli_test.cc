// End-to-end tests of the gang policies on the command line: `trellis sim --sched dqt-ffapa`
// (checked against the library run on the same generated workload) and `trellis gang-sim`.
#include <gtest/gtest.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"
#include "sched/gang/registry.h"
#include "sim/gang/gang_simulator.h"
#include "sim/workload/thesis_model.h"
#include "topology/machine.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;

using test::CommandRun;
using test::read_text;
using test::run_trellis;
using test::TempDir;

TEST(GangCli, SimWithAGangPolicyMatchesTheLibraryAndWritesTheUsualFiles) {
  const std::string spec = "thesis:load=0.9,duration=80,mean=6,seed=2";
  TempDir scratch;
  fs::path dir = scratch.path() / "out";
  CommandRun r =
      run_trellis("sim --machine torus:4x2 --generate " + spec +
                  " --sched dqt-ffapa --sched-opt quantum=1 --alloc buddy --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.output;
  auto summary = nlohmann::json::parse(read_text(dir / "summary.json"));
  ASSERT_TRUE(summary.contains("gang"));

  // The same run through the library.
  auto model = workload::parse_thesis_spec(spec, 8);
  ASSERT_TRUE(model);
  auto jobs = workload::generate_thesis_workload(*model);
  ASSERT_TRUE(jobs);
  // In time units of one second, the thesis workload is its own quantized form.
  auto dqt = gang::GangPolicyRegistry::builtin().create("dqt-ffapa", 8);
  ASSERT_TRUE(dqt);
  auto direct = gangsim::simulate_gang(gangsim::batch_jobs(*jobs), **dqt, gangsim::GangSimConfig{});
  ASSERT_TRUE(direct);
  EXPECT_DOUBLE_EQ(summary["gang"]["mean_retr"].get<double>(), direct->mean_retr);
  EXPECT_EQ(summary["gang"]["max_tqlb"].get<int>(), direct->max_tqlb);
  EXPECT_EQ(summary["metrics"]["jobs"].get<long>(), static_cast<long>(jobs->size()));
  double util = summary["metrics"]["utilization"].get<double>();
  EXPECT_GT(util, 0);
  EXPECT_LE(util, 1.0);

  // One CSV row per job, a report, and the slot-by-slot schedule of this small run.
  std::string csv = read_text(dir / "jobs.csv");
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), jobs->size() + 1);
  std::string html = read_text(dir / "report.html");
  EXPECT_NE(html.find("id=\"gang-slots\""), std::string::npos);
  EXPECT_LT(html.find("id=\"gang-slots\""), html.rfind("</body>"));
  std::string slots = read_text(dir / "slots.txt");
  EXPECT_NE(slots.find("P7"), std::string::npos);
}

TEST(GangCli, SimRejectsBadGangOptionsAndMachines) {
  TempDir scratch;
  fs::path dir = scratch.path() / "out";
  const std::string base = " --generate thesis:duration=50 --out " + dir.string();
  CommandRun zero =
      run_trellis("sim --machine flat:8 --sched dqt-ffapa --sched-opt quantum=0" + base);
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.output.find("quantum"), std::string::npos) << zero.output;
  CommandRun unknown =
      run_trellis("sim --machine flat:8 --sched dqt-ffapa --sched-opt speed=3" + base);
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("speed"), std::string::npos) << unknown.output;
  CommandRun fanout =
      run_trellis("sim --machine flat:8 --sched fair-dqt-ff --sched-opt fanout=1" + base);
  EXPECT_EQ(fanout.status, 2);
  EXPECT_NE(fanout.output.find("gang policy 'fair-dqt-ff' option fanout='1'"), std::string::npos)
      << fanout.output;
  CommandRun odd = run_trellis("sim --machine flat:12 --sched dqt-ffapa" + base);
  EXPECT_EQ(odd.status, 2);
  EXPECT_NE(odd.output.find("12"), std::string::npos) << odd.output;
  CommandRun spec = run_trellis(
      "sim --machine flat:8 --sched dqt-ffapa --generate thesis:lode=2 --out " + dir.string());
  EXPECT_EQ(spec.status, 2);
  EXPECT_NE(spec.output.find("lode"), std::string::npos) << spec.output;
}

TEST(GangCli, GangSimComparesPoliciesAndTracesSlots) {
  CommandRun r = run_trellis(
      "gang-sim --sched dqt-ffapa,fcfs-bb,slurm-gang --processors 8 --load 0.9 --duration 300 "
      "--mean-service 20 --trace-slots 5");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* word : {"dqt-ffapa", "fcfs-bb", "slurm-gang", "Slots (dqt-ffapa, 8 processors)"})
    EXPECT_NE(r.output.find(word), std::string::npos) << word;
  EXPECT_EQ(run_trellis("gang-sim --sched dqt-best").status, 2);
  EXPECT_EQ(run_trellis("gang-sim --processors 12 --duration 100").status, 2);
  EXPECT_EQ(run_trellis("gang-sim --reproduce table9").status, 2);
  EXPECT_EQ(run_trellis("gang-sim --sizes normal").status, 2);
}

TEST(GangCli, GangSimReportsDeadlockedInteractiveJobs) {
  CommandRun r = run_trellis(
      "gang-sim --interactive-jobs 2 --processors 8 --interactions 10 --slice 10 "
      "--idle-detection --deadlock-fraction 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("2 removed as globally stopped"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("deadlocked: removed at time"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace trellis
