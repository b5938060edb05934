// End-to-end tests of `trellis sim` and `trellis sim-compare`: outputs, exit codes and error
// messages, and the HTML reports opened in headless Chromium (no script errors, every chart drawn).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim_test_support.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;

struct Command {
  int status;
  std::string out;
};

// Runs a shell command, capturing stdout and stderr together.
Command shell(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "trellis-sim-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const std::string kTrellis = TRELLIS_BINARY;

const std::string kTrace = TRELLIS_SOURCE_DIR "/data/workloads/lublin_256.swf";

TEST(SimCli, WritesCsvSummaryAndReport) {
  TempDir tmp;
  Command r = shell(kTrellis + " sim --machine torus:16x16 --workload " + kTrace +
                    " --max-jobs 400 --sched conservative --alloc first-available --out " +
                    tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("wrote"), std::string::npos);
  auto summary = nlohmann::json::parse(read_file(tmp.path() / "summary.json"));
  EXPECT_EQ(summary["metrics"]["jobs"], 400);
  EXPECT_EQ(summary["policy"], "conservative");
  std::string csv = read_file(tmp.path() / "jobs.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 401);
  EXPECT_EQ(csv.rfind("id,user,submit,start,end,wait,response,run_time,requested_time,"
                      "requested_nodes,nodes,bounded_slowdown,state,reason,",
                      0),
            0u);
  EXPECT_TRUE(fs::exists(tmp.path() / "report.html"));
}

TEST(SimCli, BadInputExitsWithStatusTwoAndSaysWhere) {
  TempDir tmp;
  fs::path bad = tmp.path() / "bad.swf";
  std::ofstream(bad) << "; Version: 2\n1 0 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1\n"
                     << "2 5 -1 x 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1\n";
  Command r = shell(kTrellis + " sim --machine flat:8 --workload " + bad.string() + " --out " +
                    (tmp.path() / "o").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(bad.string() + ":3: field 4 (Run Time): 'x' is not a number"),
            std::string::npos)
      << r.out;
  Command unknown =
      shell(kTrellis + " sim --machine flat:8 --workload " + kTrace + " --sched nope");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.out.find("unknown queue policy 'nope'"), std::string::npos) << unknown.out;
}

TEST(SimCli, SavedGeneratedWorkloadReplaysTheSameRun) {
  TempDir tmp;
  fs::path swf = tmp.path() / "gen.swf";
  Command a =
      shell(kTrellis + " sim --machine torus:8x8 --generate lublin:300:4 --load 1.5 " +
            "--save-workload " + swf.string() + " --quiet --out " + (tmp.path() / "a").string());
  ASSERT_EQ(a.status, 0) << a.out;
  Command b = shell(kTrellis + " sim --machine torus:8x8 --workload " + swf.string() +
                    " --quiet --out " + (tmp.path() / "b").string());
  ASSERT_EQ(b.status, 0) << b.out;
  auto ma = nlohmann::json::parse(read_file(tmp.path() / "a" / "summary.json"))["metrics"];
  auto mb = nlohmann::json::parse(read_file(tmp.path() / "b" / "summary.json"))["metrics"];
  EXPECT_EQ(ma["jobs"].get<int>() + ma["rejected"].get<int>(), 300);
  for (const char* key :
       {"jobs", "rejected", "mean_wait_s", "makespan_s", "utilization", "mean_pairwise_hops"})
    EXPECT_EQ(ma[key], mb[key]) << key;
  EXPECT_EQ(read_file(tmp.path() / "a" / "jobs.csv"), read_file(tmp.path() / "b" / "jobs.csv"));
}

TEST(SimCli, CompareRunsTheWholeGrid) {
  TempDir tmp;
  Command r = shell(kTrellis + " sim-compare --machine torus:8x8 --generate lublin:200 " +
                    "--alloc random --sched easy --load 1,2 --seed 1,2 --metrics-only --out " +
                    tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.out;
  auto data = nlohmann::json::parse(read_file(tmp.path() / "compare.json"));
  ASSERT_EQ(data["runs"].size(), 4u);
  std::set<std::string> labels;
  for (const auto& run : data["runs"]) labels.insert(run["label"].get<std::string>());
  EXPECT_TRUE(labels.count("random/easy load 2 seed 1")) << r.out;
  EXPECT_TRUE(labels.count("random/easy load 1 seed 2")) << r.out;
  // Different seeds give different workloads, so different schedules.
  EXPECT_NE(data["runs"][0]["metrics"]["makespan_s"], data["runs"][1]["metrics"]["makespan_s"]);
}

// Opens `html` in headless Chromium and checks that the page drew every chart it meant to, with
// no script error.
// The value of attribute `name` in an HTML start tag ("" when absent).
std::string attribute(const std::string& tag, const std::string& name) {
  size_t at = tag.find(" " + name + "=\"");
  if (at == std::string::npos) return "";
  size_t start = at + name.size() + 3;
  return tag.substr(start, tag.find('"', start) - start);
}

void expect_renders(const fs::path& html, const fs::path& scratch, int min_charts) {
  fs::path profile = scratch / "chromium-profile";
  fs::create_directories(profile);
  fs::path dom = scratch / "dom.html", log = scratch / "chromium.log";
  std::string cmd =
      "timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu "
      "--disable-quic --no-first-run --disable-background-networking "
      "--disable-component-update --disable-sync --user-data-dir=" +
      profile.string() +
      " --enable-logging=stderr --v=0 --virtual-time-budget=15000 --dump-dom file://" +
      html.string() + " > " + dom.string() + " 2> " + log.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(log);
  std::string page = read_file(dom);
  // The report's <body> records what its scripts did: charts expected, charts drawn, errors.
  // (Embedded frames have bodies of their own; take the one that carries the record.)
  std::string tag;
  for (size_t at = page.find("<body"); at != std::string::npos; at = page.find("<body", at + 1)) {
    std::string candidate = page.substr(at, page.find('>', at) - at);
    if (candidate.find("data-charts-rendered") != std::string::npos) {
      tag = candidate;
      break;
    }
  }
  ASSERT_FALSE(tag.empty()) << "no report body in the DOM";
  int rendered = std::stoi(attribute(tag, "data-charts-rendered"));
  int expected = std::stoi(attribute(tag, "data-charts-expected"));
  EXPECT_EQ(attribute(tag, "data-errors"), "") << "script errors";
  EXPECT_EQ(rendered, expected);
  EXPECT_GE(rendered, min_charts);
  size_t canvases = 0;
  for (size_t at = page.find("<canvas"); at != std::string::npos; at = page.find("<canvas", at + 1))
    ++canvases;
  EXPECT_GE(canvases, static_cast<size_t>(rendered)) << "charts without a drawing surface";
  std::string console = read_file(log);
  EXPECT_EQ(console.find("Uncaught"), std::string::npos) << console;
}

bool have_chromium() {
  return fs::exists("/usr/bin/chromium");
}

TEST(SimReport, RendersInHeadlessChromium) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  Command r =
      shell(kTrellis + " sim --machine torus:8x8x4 --workload " + kTrace +
            " --max-jobs 300 --sched easy --alloc random --quiet --out " + tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.out;
  // Gantt, utilization/queue, slowdown histogram and four occupancy maps.
  expect_renders(tmp.path() / "report.html", tmp.path(), 7);
}

TEST(SimReport, ComparisonRendersInHeadlessChromium) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  Command r = shell(kTrellis + " sim-compare --machine torus:16x16 --workload " + kTrace +
                    " --max-jobs 300 --alloc first-available,random --sched easy,fcfs --out " +
                    tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* label :
       {"first-available/easy", "first-available/fcfs", "random/easy", "random/fcfs"})
    EXPECT_NE(r.out.find(label), std::string::npos) << r.out;
  auto data = nlohmann::json::parse(read_file(tmp.path() / "compare.json"));
  EXPECT_EQ(data["runs"].size(), 4u);
  expect_renders(tmp.path() / "compare.html", tmp.path(), 4);
}

// Issue "research-grade simulator", item 4: offered load was 2.648 for dqt-ffapa where easy gave
// 0.912 on the same workload; it measures the work arriving, whatever the policy does with it.
TEST(SimCli, OfferedLoadIsThePolicysNotConcern) {
  TempDir tmp;
  std::map<std::string, double> load;
  for (const char* policy : {"easy", "dqt-ffapa"}) {
    Command r = shell(kTrellis + " sim --machine flat:64 --generate lublin:300:3 --quiet --sched " +
                      policy + " --out " + (tmp.path() / policy).string());
    ASSERT_EQ(r.status, 0) << r.out;
    auto m = nlohmann::json::parse(read_file(tmp.path() / policy / "summary.json"))["metrics"];
    ASSERT_EQ(m["rejected"], 0) << policy;
    load[policy] = m["offered_load"].get<double>();
  }
  EXPECT_GT(load["easy"], 0.1);
  EXPECT_NEAR(load["dqt-ffapa"], load["easy"], 1e-9);
}

// Item 5: --metrics-only printed "mean pairwise hops 0.000".
TEST(SimCli, MetricsOnlySaysHopsWereNotComputed) {
  TempDir tmp;
  Command r = shell(kTrellis + " sim --machine torus:8x8 --generate lublin:100 --metrics-only " +
                    "--out " + tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("mean pairwise hops n/a"), std::string::npos) << r.out;
  auto m = nlohmann::json::parse(read_file(tmp.path() / "summary.json"))["metrics"];
  EXPECT_TRUE(m["mean_pairwise_hops"].is_null());
}

// Item 6: --save-workload with a gang policy wrote no file.
TEST(SimCli, GangPolicySavesTheWorkloadToo) {
  TempDir tmp;
  fs::path swf = tmp.path() / "saved.swf";
  Command r =
      shell(kTrellis + " sim --machine flat:32 --generate lublin:50:2 --sched dqt-ffapa " +
            "--quiet --save-workload " + swf.string() + " --out " + (tmp.path() / "o").string());
  ASSERT_EQ(r.status, 0) << r.out;
  std::string text = read_file(swf);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n') - std::count(text.begin(), text.end(), ';'),
            50);
}

// Item 9: rejected jobs were only a count on the console.
TEST(SimCli, RejectedJobsAreListedWithReasonsAndHints) {
  TempDir tmp;
  Command r = shell(kTrellis + " sim --machine torus:16x16 --workload " + kTrace +
                    " --max-jobs 600 --alloc contiguous --out " + tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.out;
  auto summary = nlohmann::json::parse(read_file(tmp.path() / "summary.json"));
  long rejected = summary["metrics"]["rejected"].get<long>();
  ASSERT_GT(rejected, 0);  // counts such as 17 that no box holds exactly
  std::string csv = read_file(tmp.path() / "jobs.csv");
  long rj_rows = 0;
  for (size_t at = csv.find(",RJ,"); at != std::string::npos; at = csv.find(",RJ,", at + 1))
    ++rj_rows;
  EXPECT_EQ(rj_rows, rejected);
  EXPECT_NE(r.out.find("jobs were rejected and never ran"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--shape-requests"), std::string::npos) << r.out;
}

// Item 11: a trace recorded on a larger machine was not mentioned.
TEST(SimCli, WarnsWhenTheTraceWasRecordedOnALargerMachine) {
  TempDir tmp;
  Command r = shell(kTrellis + " sim --machine torus:8x8 --workload " + testing::shared_dir() +
                    "/workloads/NASA-iPSC-1993-3.1-cln.swf --max-jobs 50 --metrics-only --out " +
                    tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("was recorded on 128 processors, but torus:8x8 has 64 nodes"),
            std::string::npos)
      << r.out;
}

// Item 8: on a 16M-node torus the run made no progress in 90 s (pairwise hops were quadratic in
// the axis length).
TEST(SimCli, RunsOnSixteenMillionNodes) {
  TempDir tmp;
  Command r = shell(kTrellis + " sim --machine torus:4096x4096 --generate lublin:8 --out " +
                    tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.out;
  auto m = nlohmann::json::parse(read_file(tmp.path() / "summary.json"))["metrics"];
  EXPECT_EQ(m["jobs"].get<int>() + m["rejected"].get<int>(), 8);
  EXPECT_TRUE(m["largest_free_box_sampled"].get<bool>());
  EXPECT_GT(m["mean_pairwise_hops"].get<double>(), 0);
}

}  // namespace
}  // namespace trellis
