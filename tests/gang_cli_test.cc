// End-to-end tests of the gang policies on the command line: `trellis sim --sched dqt-ffapa`
// (checked against the library run on the same generated workload) and `trellis gang-sim`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sched/gang/registry.h"
#include "sim/gang/sim_result_bridge.h"
#include "sim/workload/thesis_model.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status;
  std::string out;
};

Outcome run_trellis(const std::string& arguments) {
  std::string out;
  FILE* pipe = popen((std::string(TRELLIS_BINARY) + " " + arguments + " 2>&1").c_str(), "r");
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path fresh_dir(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / ("trellis-gang-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  return dir;
}

TEST(GangCli, SimWithAGangPolicyMatchesTheLibraryAndWritesTheUsualFiles) {
  const std::string spec = "thesis:load=0.9,duration=80,mean=6,seed=2";
  fs::path dir = fresh_dir("sim");
  Outcome r =
      run_trellis("sim --machine torus:4x2 --generate " + spec +
                  " --sched dqt-ffapa --sched-opt quantum=1 --alloc buddy --out " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  auto summary = nlohmann::json::parse(slurp(dir / "summary.json"));
  ASSERT_TRUE(summary.contains("gang"));

  // The same run through the library.
  auto model = workload::parse_thesis_spec(spec, 8);
  ASSERT_TRUE(model);
  auto jobs = workload::generate_thesis_workload(*model);
  ASSERT_TRUE(jobs);
  auto quantized = gangsim::quantize(*jobs, 8, 1.0);
  auto dqt = gang::GangPolicyRegistry::builtin().create("dqt-ffapa", 8);
  ASSERT_TRUE(dqt);
  auto direct = gangsim::simulate_gang(quantized.jobs, **dqt, gangsim::GangSimConfig{});
  ASSERT_TRUE(direct);
  EXPECT_DOUBLE_EQ(summary["gang"]["mean_retr"].get<double>(), direct->mean_retr);
  EXPECT_EQ(summary["gang"]["max_tqlb"].get<int>(), direct->max_tqlb);
  EXPECT_EQ(summary["metrics"]["jobs"].get<long>(), static_cast<long>(jobs->size()));
  double util = summary["metrics"]["utilization"].get<double>();
  EXPECT_GT(util, 0);
  EXPECT_LE(util, 1.0);

  // One CSV row per job, a report, and the slot-by-slot schedule of this small run.
  std::string csv = slurp(dir / "jobs.csv");
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), jobs->size() + 1);
  std::string html = slurp(dir / "report.html");
  EXPECT_NE(html.find("id=\"gang-slots\""), std::string::npos);
  EXPECT_LT(html.find("id=\"gang-slots\""), html.rfind("</body>"));
  std::string slots = slurp(dir / "slots.txt");
  EXPECT_NE(slots.find("P7"), std::string::npos);
  fs::remove_all(dir);
}

TEST(GangCli, SimRejectsBadGangOptionsAndMachines) {
  fs::path dir = fresh_dir("bad");
  const std::string base = " --generate thesis:duration=50 --out " + dir.string();
  Outcome zero = run_trellis("sim --machine flat:8 --sched dqt-ffapa --sched-opt quantum=0" + base);
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.out.find("quantum"), std::string::npos) << zero.out;
  Outcome unknown =
      run_trellis("sim --machine flat:8 --sched dqt-ffapa --sched-opt speed=3" + base);
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.out.find("speed"), std::string::npos) << unknown.out;
  Outcome odd = run_trellis("sim --machine flat:12 --sched dqt-ffapa" + base);
  EXPECT_EQ(odd.status, 2);
  EXPECT_NE(odd.out.find("12"), std::string::npos) << odd.out;
  Outcome spec = run_trellis(
      "sim --machine flat:8 --sched dqt-ffapa --generate thesis:lode=2 --out " + dir.string());
  EXPECT_EQ(spec.status, 2);
  EXPECT_NE(spec.out.find("lode"), std::string::npos) << spec.out;
  fs::remove_all(dir);
}

TEST(GangCli, GangSimComparesPoliciesAndTracesSlots) {
  Outcome r = run_trellis(
      "gang-sim --sched dqt-ffapa,fcfs-bb,slurm-gang --processors 8 --load 0.9 --duration 300 "
      "--mean-service 20 --trace-slots 5");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* word : {"dqt-ffapa", "fcfs-bb", "slurm-gang", "Slots (dqt-ffapa, 8 processors)"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
  EXPECT_EQ(run_trellis("gang-sim --sched dqt-best").status, 2);
  EXPECT_EQ(run_trellis("gang-sim --processors 12 --duration 100").status, 2);
  EXPECT_EQ(run_trellis("gang-sim --reproduce table9").status, 2);
  EXPECT_EQ(run_trellis("gang-sim --sizes normal").status, 2);
}

TEST(GangCli, GangSimReportsDeadlockedInteractiveJobs) {
  Outcome r = run_trellis(
      "gang-sim --interactive-jobs 2 --processors 8 --interactions 10 --slice 10 "
      "--idle-detection --deadlock-fraction 1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2 removed as globally stopped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("deadlocked: removed at time"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace trellis
