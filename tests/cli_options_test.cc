// End-to-end tests of issue 9's command-line items: options that did nothing are refused or work,
// exit codes, help and version, `trellis alloc --json`, `trellis demo` on other machine kinds,
// `gang-sim --drain`, and sim-compare's checks and its comparison over common jobs.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "build_paths.h"
#include "cli_run.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;
using test::CommandRun;
using test::contains;
using test::run_trellis;
using test::TempDir;

const std::string kTrace = TRELLIS_SOURCE_DIR + "/data/workloads/lublin_256.swf";

// --- A: options that did nothing ---

TEST(CliOptions, MaxJobsMustBeAPositiveWholeNumber) {
  TempDir dir;
  for (const char* bad : {"0", "-5", "2.5"}) {
    CommandRun r = run_trellis("sim -m torus:8x8 --generate lublin:30:1 --max-jobs " +
                               std::string(bad) + " --out " + dir.str());
    EXPECT_EQ(r.status, 2) << bad << ": " << r.output;
    EXPECT_TRUE(contains(r, "--max-jobs: must be a positive whole number")) << r.output;
  }
  CommandRun ok =
      run_trellis("sim -m torus:8x8 --generate lublin:30:1 --max-jobs 7 --out " + dir.str());
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_TRUE(contains(ok, "trellis sim: 7 jobs")) << ok.output;
}

TEST(CliOptions, NoncontModeWithABoxOnlyAllocatorIsRefused) {
  TempDir dir;
  const std::string base =
      "sim -m torus:8x8 --generate lublin:20:1 --mode noncont --out " + dir.str() + " --alloc ";
  CommandRun contiguous = run_trellis(base + "contiguous");
  EXPECT_EQ(contiguous.status, 2) << contiguous.output;
  EXPECT_TRUE(contains(contiguous,
                       "allocator 'contiguous' places only boxes; --mode noncont needs an "
                       "allocator that takes any nodes, e.g. first-available"))
      << contiguous.output;
  EXPECT_FALSE(fs::exists(dir.path() / "summary.json"));
  CommandRun any_nodes = run_trellis(base + "first-available");
  EXPECT_EQ(any_nodes.status, 0) << any_nodes.output;
  CommandRun alloc = run_trellis("alloc -m torus:4x4 -r 3 --mode noncont");
  EXPECT_EQ(alloc.status, 2) << alloc.output;
  EXPECT_TRUE(contains(alloc, "places only boxes")) << alloc.output;
}

TEST(CliOptions, BoxModesAndShapedRequestsAreRefusedOffAMeshOrTorus) {
  TempDir dir;
  const std::string out = " --generate lublin:20:1 --out " + dir.str();
  for (const char* args : {"sim -m fattree:4,4,4 --mode mesh", "sim -m flat:64 --mode torus",
                           "sim -m fattree:4,4,4 --shape-requests",
                           "sim -m torus:8x8 --shape-requests --mode noncont --alloc random"}) {
    CommandRun r = run_trellis(args + out);
    EXPECT_EQ(r.status, 2) << args << ": " << r.output;
    EXPECT_TRUE(contains(r, "mesh/torus") || contains(r, "noncont")) << r.output;
  }
  // Gang policies take whole partitions: a mode or shaped requests would be ignored.
  CommandRun gang = run_trellis("sim -m torus:4x2 --sched dqt-ffapa --mode mesh" + out);
  EXPECT_EQ(gang.status, 2) << gang.output;
  EXPECT_TRUE(contains(gang, "do not apply to gang policy 'dqt-ffapa'")) << gang.output;
  CommandRun alloc = run_trellis("alloc -m fattree:4,4,4 -r 8 --mode torus");
  EXPECT_EQ(alloc.status, 2) << alloc.output;
  EXPECT_TRUE(contains(alloc, "fattree:4,4,4 is a fat tree")) << alloc.output;

  // The default mode is accepted everywhere: the machine's own.
  CommandRun tree = run_trellis("sim -m fattree:4,4,4" + out);
  ASSERT_EQ(tree.status, 0) << tree.output;
  auto summary = nlohmann::json::parse(test::read_text(dir.path() / "summary.json"));
  EXPECT_EQ(summary["mode"], "noncont");
  // Old command lines keep working.
  CommandRun torus = run_trellis("sim -m torus:8x8 --mode torus --shape-requests" + out);
  EXPECT_EQ(torus.status, 0) << torus.output;
  summary = nlohmann::json::parse(test::read_text(dir.path() / "summary.json"));
  EXPECT_EQ(summary["mode"], "torus");
}

// Number of jobs in a `gang-sim --json --json-jobs` file that did not finish.
int unfinished_jobs(const fs::path& json_file, int* total) {
  auto doc = nlohmann::json::parse(test::read_text(json_file));
  int unfinished = 0;
  *total = 0;
  for (const auto& run : doc)
    for (const auto& job : run["jobs"]) {
      ++*total;
      if (job["fate"] != "finished") ++unfinished;
    }
  return unfinished;
}

TEST(CliOptions, GangSimDrainLeavesNoJobUnfinished) {
  TempDir dir;
  const std::string base = "gang-sim --processors 8 --load 0.9 --duration 400 --json-jobs --json ";
  CommandRun cut = run_trellis(base + (dir.path() / "cut.json").string());
  ASSERT_EQ(cut.status, 0) << cut.output;
  int cut_total = 0;
  // Without --drain the run stops when arrivals do, with jobs still in the system.
  EXPECT_GT(unfinished_jobs(dir.path() / "cut.json", &cut_total), 0);
  CommandRun drained = run_trellis(base + (dir.path() / "drained.json").string() + " --drain");
  ASSERT_EQ(drained.status, 0) << drained.output;
  int drained_total = 0;
  EXPECT_EQ(unfinished_jobs(dir.path() / "drained.json", &drained_total), 0);
  EXPECT_EQ(drained_total, cut_total);  // the same jobs arrived; all of them finished
  EXPECT_GT(drained_total, 0);
}

// --- B: exit codes and sim-compare's checks ---

TEST(CliOptions, SimCompareChecksTheWholeGridBeforeAnyRun) {
  TempDir dir;
  const std::string out = (dir.path() / "cmp").string();
  const std::string base = "sim-compare -m torus:8x8 --out " + out + " ";
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"--generate lublin:20:1 --alloc contiguous,nope", "unknown allocator 'nope' (known: "},
      {"--generate lublin:20:1 --alloc fattree-units", "fattree-units"},
      {"--generate lublin:20:1 --sched easy,bogus",
       "unknown queue policy 'bogus', and no gang policy has that name (queue policies: "},
      {"--generate lublin:20:1 --sched easy --sched-opt njob=2",
       "queue policy 'easy' has no option 'njob'"},
      {"--workload /nonexistent/trace.swf", "/nonexistent/trace.swf"},
      {"--generate lublin:20:1 --load 1,-1", "--load: -1 is not a positive number"},
      {"--generate lublin:20:1 --seed -3", "--seed: -3 is negative"},
      {"--workload " + kTrace + " --alloc contiguous --seed 1,2", "--seed changes nothing"},
      {"--generate lublin:20:1 --alloc contiguous --mode noncont", "places only boxes"},
      {"--generate lublin:20:1 --jobs 0", "--jobs: must be a positive whole number"},
  };
  for (const auto& c : cases) {
    CommandRun r = run_trellis(base + c.args);
    EXPECT_EQ(r.status, 2) << c.args << ":\n" << r.output;
    EXPECT_TRUE(contains(r, c.message)) << c.args << ": missing '" << c.message << "' in\n"
                                        << r.output;
    EXPECT_FALSE(contains(r, "runs on")) << c.args << " started runs:\n" << r.output;
    EXPECT_FALSE(fs::exists(out)) << c.args << " created the output directory";
  }
  CommandRun file_as_out = run_trellis("sim-compare -m torus:8x8 --generate lublin:20:1 --out " +
                                       std::string(TRELLIS_BINARY));
  EXPECT_EQ(file_as_out.status, 2) << file_as_out.output;
}

// --- C: help, version, messages ---

// `trellis run -N 2 -- cmd` (as the issue and srun's users write it) reaches the command: CLI11
// handed "--" and the words after it to `trellis`, which refused them as unexpected.
TEST(CliOptions, RunTakesItsCommandAfterADoubleDash) {
  TempDir dir;
  const std::string conf = " --conf " + dir.str() + "/absent.toml";
  for (const std::string& words :
       {"run -N 2" + conf + " -- sh -c 'exit 3'", "run -N 2" + conf + " sh -c 'exit 3'"}) {
    CommandRun r = run_trellis(words);
    EXPECT_FALSE(contains(r, "not expected")) << words << ": " << r.output;
    EXPECT_TRUE(contains(r, "absent.toml")) << words << ": " << r.output;
  }
  CommandRun none = run_trellis("run -N 2" + conf + " --");
  EXPECT_EQ(none.status, 2) << none.output;
  EXPECT_TRUE(contains(none, "no command")) << none.output;
}

TEST(CliHelp, VersionPrintsTheProjectVersion) {
  CommandRun r = run_trellis("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output, std::string("trellis ") + TRELLIS_VERSION + "\n");
}

TEST(CliHelp, HelpSubcommandPrintsTheHelp) {
  CommandRun top = run_trellis("help");
  EXPECT_EQ(top.status, 0) << top.output;
  EXPECT_TRUE(contains(top, "sim-compare"));
  EXPECT_TRUE(contains(top, "Exit status: 0 success; 1 a failure while running; 2 bad usage"))
      << top.output;
  EXPECT_TRUE(contains(top, "3 (trellis alloc) the job fits the machine but cannot be placed"));
  CommandRun sim = run_trellis("help sim");
  EXPECT_EQ(sim.status, 0) << sim.output;
  EXPECT_TRUE(contains(sim, "trellis sim [OPTIONS]")) << sim.output;
  EXPECT_TRUE(contains(sim, "--max-jobs"));
  CommandRun nested = run_trellis("help bench mc");
  EXPECT_EQ(nested.status, 0) << nested.output;
  EXPECT_TRUE(contains(nested, "--quick")) << nested.output;
  CommandRun unknown = run_trellis("help simulate");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_TRUE(contains(unknown, "no subcommand 'simulate'")) << unknown.output;
}

TEST(CliHelp, HelpTextsAndTheListUsePlainWords) {
  for (const char* args : {"--help-all", "list"}) {
    CommandRun r = run_trellis(args);
    EXPECT_EQ(r.status, 0) << r.output;
    for (const char* jargon : {"seed 0", "embodiment-1", "W_act", " TAP", " PEs"})
      EXPECT_FALSE(contains(r, jargon)) << "'" << jargon << "' in `trellis " << args << "`";
  }
}

TEST(CliOptions, OptionErrorsNameThePolicyTheOptionAndTheValidOnes) {
  TempDir dir;
  const std::string base = "sim -m torus:8x8 --generate lublin:20:1 --out " + dir.str() + " ";
  CommandRun easy = run_trellis(base + "--sched easy --sched-opt speed=3");
  EXPECT_EQ(easy.status, 2);
  EXPECT_TRUE(contains(easy, "queue policy 'easy' has no option 'speed' (it takes none)"))
      << easy.output;
  CommandRun alloc = run_trellis(base + "--alloc contiguous --alloc-opt speed=3");
  EXPECT_EQ(alloc.status, 2);
  EXPECT_TRUE(contains(alloc, "allocator 'contiguous' has no option 'speed' (it takes: search)"))
      << alloc.output;
  CommandRun gang = run_trellis(
      "sim -m flat:8 --generate lublin:20:1 --sched dqt-ffapa --sched-opt speed=3 "
      "--out " +
      dir.str());
  EXPECT_EQ(gang.status, 2);
  EXPECT_TRUE(contains(gang,
                       "gang policy 'dqt-ffapa' has no option 'speed' (it takes: quantum, "
                       "fanout, max_jobs_per_node, trace_slots)"))
      << gang.output;
  // A comma list in one --sched-opt is several options.
  CommandRun list = run_trellis(
      "sim -m flat:8 --generate lublin:20:1 --sched dqt-ffapa --sched-opt quantum=10,fanout=2 "
      "--out " +
      dir.str() + " -q");
  EXPECT_EQ(list.status, 0) << list.output;
}

TEST(CliAlloc, ModeIsShownOnlyOnAMeshOrTorus) {
  CommandRun tree = run_trellis("alloc -m fattree:4,4,4 -r 8");
  EXPECT_EQ(tree.status, 0) << tree.output;
  EXPECT_TRUE(contains(tree, "request:    8 nodes\n")) << tree.output;
  EXPECT_FALSE(contains(tree, "mode")) << tree.output;
  CommandRun torus = run_trellis("alloc -m torus:8x8 -r 4");
  EXPECT_TRUE(contains(torus, "request:    4 nodes (torus mode)")) << torus.output;
}

TEST(CliAlloc, AllocAndSimPickTheSameDefaultAllocator) {
  for (std::string spec : {"fattree:4,4,4", "torus:8x8", "flat:16"}) {
    TempDir dir;
    CommandRun sim =
        run_trellis("sim -m " + spec + " --generate lublin:20:1 --quiet --out " + dir.str());
    ASSERT_EQ(sim.status, 0) << sim.output;
    std::string chosen =
        nlohmann::json::parse(test::read_text(dir.path() / "summary.json"))["allocator"];
    CommandRun alloc = run_trellis("alloc -m " + spec + " -r 4");
    EXPECT_TRUE(contains(alloc, "allocator:  " + chosen + "\n")) << spec << ": " << alloc.output;
    CommandRun demo = run_trellis("demo -m " + spec);
    EXPECT_TRUE(contains(demo, "allocator:  " + chosen + "\n")) << spec << ": " << demo.output;
  }
}

TEST(CliDemo, UsesRequestsThatFitTheMachineKind) {
  CommandRun tree = run_trellis("demo --machine fattree:4,4,4");
  EXPECT_EQ(tree.status, 0) << tree.output;
  EXPECT_FALSE(contains(tree, "4x4x4")) << tree.output;
  EXPECT_FALSE(contains(tree, "not placed")) << tree.output;
  EXPECT_FALSE(contains(tree, "mode")) << tree.output;
  EXPECT_TRUE(contains(tree, "== job 1: 8\n")) << tree.output;
  CommandRun torus = run_trellis("demo");
  EXPECT_EQ(torus.status, 0) << torus.output;
  EXPECT_TRUE(contains(torus, "== job 1: 4x4x4")) << torus.output;
}

// --- E: alloc --json ---

TEST(CliAlloc, JsonGivesTheDecision) {
  CommandRun r = run_trellis("alloc -m torus:4x4x2 -b 'n[0-1]' -r 2x2x2 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  auto doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc["machine"], "torus:4x4x2");
  EXPECT_EQ(doc["allocator"], "contiguous");
  EXPECT_EQ(doc["request"]["nodes"], 8);
  EXPECT_EQ(doc["request"]["mode"], "torus");
  EXPECT_TRUE(doc["placed"].get<bool>());
  const auto& placement = doc["placement"];
  ASSERT_EQ(placement["nodes"].size(), 8u);
  std::set<int> nodes;
  for (const auto& n : placement["nodes"]) nodes.insert(n.get<int>());
  EXPECT_FALSE(nodes.count(0) || nodes.count(1)) << "a busy node was placed";
  EXPECT_FALSE(placement["hostlist"].get<std::string>().empty());
  EXPECT_EQ(placement["box"]["shape"].size(), 3u);
  EXPECT_EQ(placement["box"]["origin"].size(), 3u);
  EXPECT_EQ(doc["metrics"]["free_after"], 22);
  EXPECT_TRUE(doc["metrics"]["average_pairwise_hops"].is_number());

  CommandRun tree = run_trellis("alloc -m fattree:4,4,4 -r 5 --json");
  ASSERT_EQ(tree.status, 0) << tree.output;
  auto t = nlohmann::json::parse(tree.output);
  EXPECT_FALSE(t["placement"].contains("box"));
  EXPECT_FALSE(t["request"].contains("mode"));
  EXPECT_EQ(t["placement"]["hostlist"], "n[0-4]");

  CommandRun none = run_trellis("alloc -m torus:4x4 -b 'n[5,10]' -r 3x3 --mode mesh --json");
  EXPECT_EQ(none.status, 3) << none.output;
  auto n = nlohmann::json::parse(none.output);
  EXPECT_FALSE(n["placed"].get<bool>());
  EXPECT_NE(n["reason"].get<std::string>().find("no free box 3x3"), std::string::npos);
  EXPECT_FALSE(n.contains("placement"));
}

// --- F: sim-compare over differing job sets ---

TEST(CliOptions, SimCompareComparesRunsOverTheJobsEveryRunCompleted) {
  TempDir dir;
  const std::string out = (dir.path() / "cmp").string();
  // On an 8x8 torus the contiguous allocator with --exact rejects sizes no box holds (11 nodes,
  // say); first-available runs every job.
  CommandRun r = run_trellis(
      "sim-compare -m torus:8x8 --generate lublin:80:3 --exact --alloc "
      "contiguous,first-available --sched easy --out " +
      out);
  ASSERT_EQ(r.status, 0) << r.output;
  auto data = nlohmann::json::parse(test::read_text(fs::path(out) / "compare.json"));
  ASSERT_TRUE(data["job_sets_differ"].get<bool>()) << data.dump(2);
  EXPECT_TRUE(contains(r, "warning: the runs completed different jobs")) << r.output;
  const auto& runs = data["runs"];
  ASSERT_EQ(runs.size(), 2u);
  const long common = data["common_jobs"].get<long>();
  const long contiguous = runs[0]["completed_jobs"].get<long>();
  const long first_available = runs[1]["completed_jobs"].get<long>();
  EXPECT_LT(contiguous, first_available);
  EXPECT_EQ(common, contiguous);  // first-available completes every job contiguous does
  EXPECT_GT(runs[0]["metrics"]["rejected"].get<long>(), 0);
  for (const auto& run : runs) {
    for (const char* key : {"mean_wait_s", "mean_response_s", "mean_bounded_slowdown"})
      EXPECT_TRUE(run["common_metrics"][key].is_number()) << key;
    EXPECT_GE(run["common_metrics"]["mean_bounded_slowdown"].get<double>(), 1.0);
    EXPECT_TRUE(fs::exists(fs::path(out) / run["report"].get<std::string>())) << run["report"];
  }

  // Generated workloads differ from seed to seed: runs are compared only with runs on the same
  // workload. Here each seed gives a different number of jobs, and no run rejects any.
  CommandRun seeds = run_trellis(
      "sim-compare -m flat:8 --generate thesis:duration=5000,mean=50 --alloc first-available "
      "--sched easy,fcfs --seed 1,2 --out " +
      out + "-seeds");
  ASSERT_EQ(seeds.status, 0) << seeds.output;
  auto by_seed = nlohmann::json::parse(test::read_text(fs::path(out + "-seeds") / "compare.json"));
  ASSERT_EQ(by_seed["runs"].size(), 4u);
  EXPECT_NE(by_seed["runs"][0]["completed_jobs"], by_seed["runs"][1]["completed_jobs"])
      << "the two seeds should generate different workloads";
  EXPECT_FALSE(by_seed["job_sets_differ"].get<bool>()) << by_seed.dump(2);
  EXPECT_FALSE(contains(seeds, "warning")) << seeds.output;

  CommandRun grouped = run_trellis(
      "sim-compare -m torus:8x8 --generate lublin:80:3 --exact --alloc "
      "contiguous,first-available --seed 3,4 --out " +
      out + "-grouped");
  ASSERT_EQ(grouped.status, 0) << grouped.output;
  auto g = nlohmann::json::parse(test::read_text(fs::path(out + "-grouped") / "compare.json"));
  ASSERT_TRUE(g["job_sets_differ"].get<bool>()) << g.dump(2);
  ASSERT_EQ(g["common_jobs_by_workload_seed"].size(), 2u);
  EXPECT_EQ(g["common_jobs"].get<long>(), g["common_jobs_by_workload_seed"]["3"].get<long>() +
                                              g["common_jobs_by_workload_seed"]["4"].get<long>());

  CommandRun metrics_only = run_trellis(
      "sim-compare -m torus:8x8 --generate lublin:40:3 --alloc contiguous,first-available "
      "--metrics-only --out " +
      out + "2");
  ASSERT_EQ(metrics_only.status, 0) << metrics_only.output;
  EXPECT_TRUE(contains(metrics_only, "needs per-job output")) << metrics_only.output;
}

}  // namespace
}  // namespace trellis
