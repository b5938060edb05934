// The HTML reports opened in headless Chromium: every chart drawn with no script error, the Gantt
// chart spanning the whole run and drawing every busy node-second (checked against summary.json
// and jobs.csv), every node on the occupancy maps, gang jobs never drawn on top of each other, and
// the comparison page's links, seed spreads, load curves and job-set warning.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "browser.h"
#include "build_paths.h"
#include "sim/html_report.h"
#include "sim/outputs.h"

namespace trellis {
namespace {

using browser_test::attribute;
using browser_test::element_tag;
using browser_test::expect_renders;
using browser_test::have_chromium;
using browser_test::int_attribute;
using browser_test::report_body;
using test::CommandRun;
using test::read_text;
using test::run_trellis;
using test::TempDir;
namespace fs = std::filesystem;

const std::string kTrace = TRELLIS_SOURCE_DIR + "/data/workloads/lublin_256.swf";

double number(const std::string& text) {
  EXPECT_FALSE(text.empty());
  return text.empty() ? std::nan("") : std::stod(text);
}

// Node-seconds of the jobs in jobs.csv: nodes * (end - start), columns named in its header.
double csv_node_seconds(const fs::path& csv) {
  std::istringstream in(read_text(csv));
  std::string line;
  std::getline(in, line);
  std::map<std::string, size_t> column;
  std::vector<std::string> header = parse_csv_line(line);
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  double total = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> cells = parse_csv_line(line);
    if (cells.at(column.at("end")).empty()) continue;  // rejected (RJ): never ran
    total += std::stod(cells.at(column.at("nodes"))) *
             (std::stod(cells.at(column.at("end"))) - std::stod(cells.at(column.at("start"))));
  }
  return total;
}

// The text of the element with id `id` up to its first child tag.
std::string element_text(const std::string& dom, const std::string& id) {
  size_t at = dom.find(" id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  size_t start = dom.find('>', at) + 1;
  return dom.substr(start, dom.find("</", start) - start);
}

// The run's Gantt chart spans [first submit, last end] and drew its busy node-seconds: those of
// the summary's utilization (busy node-seconds / (nodes * makespan)), and those of jobs.csv when
// given (its times have six significant digits, hence the looser bound).
void expect_gantt_covers_run(const std::string& dom, const nlohmann::json& metrics, int nodes,
                             const fs::path& jobs_csv = {}) {
  std::string gantt = element_tag(dom, "gantt");
  ASSERT_FALSE(gantt.empty());
  double first = metrics["first_submit_s"], last = metrics["last_end_s"];
  EXPECT_NEAR(number(attribute(gantt, "data-x-min-s")), first, 1e-6 * std::max(1.0, last));
  EXPECT_NEAR(number(attribute(gantt, "data-x-max-s")), last, 1e-6 * std::max(1.0, last));
  double drawn = number(attribute(gantt, "data-busy-node-seconds"));
  double busy = metrics["utilization"].get<double>() * nodes * metrics["makespan_s"].get<double>();
  EXPECT_NEAR(drawn, busy, 1e-9 * busy);
  if (!jobs_csv.empty()) {
    double csv = csv_node_seconds(jobs_csv);
    EXPECT_NEAR(drawn, csv, 1e-4 * csv);
  }
}

// Whether an element's start tag hides it.
bool hidden(const std::string& tag) {
  return tag.find("display:none") != std::string::npos ||
         tag.find("display: none") != std::string::npos;
}

// Every occupancy map drew one cell per node, busy or free.
void expect_maps_cover_machine(const std::string& dom, int nodes, int maps) {
  // (Plain string search, not <regex>: GCC 12 warns falsely inside <regex> under the sanitizers.)
  const std::string prefix = "id=\"occupancy-";
  int seen = 0;
  for (size_t at = dom.find(prefix); at != std::string::npos; at = dom.find(prefix, at + 1)) {
    size_t start = at + prefix.size();
    std::string id = dom.substr(start, dom.find('"', start) - start);
    if (id != "live" && (id.empty() || id.find_first_not_of("0123456789") != std::string::npos))
      continue;
    std::string tag = element_tag(dom, "occupancy-" + id);
    int busy = int_attribute(tag, "data-busy-cells");
    int free = int_attribute(tag, "data-free-cells");
    EXPECT_EQ(busy + free, nodes) << tag;
    EXPECT_EQ(attribute(tag, "data-nodes"), std::to_string(nodes));
    EXPECT_GT(busy, 0) << "maps are taken where the machine is busy: " << tag;
    ++seen;
  }
  EXPECT_EQ(seen, maps);
}

TEST(ReportBrowser, RunReportDrawsTheWholeRunAndEveryNode) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  CommandRun r = run_trellis("sim --machine torus:8x8 --workload " + kTrace +
                             " --max-jobs 400 --sched easy --alloc contiguous --quiet --out " +
                             tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::string dom = expect_renders(tmp.path() / "report.html", tmp.path(), 8);
  auto summary = nlohmann::json::parse(read_text(tmp.path() / "summary.json"));
  expect_gantt_covers_run(dom, summary["metrics"], 64, tmp.path() / "jobs.csv");
  EXPECT_NE(element_text(dom, "gantt-note").find("one rectangle per run"), std::string::npos);
  // 400 jobs of the Lublin trace span days.
  EXPECT_EQ(attribute(element_tag(dom, "gantt"), "data-time-unit"), "days");
  expect_maps_cover_machine(dom, 64, 5);
  EXPECT_EQ(attribute(report_body(dom), "data-page-overflow"), "0");
  // Metrics not computed read n/a, not -1.
  EXPECT_NE(dom.find("Mean leaf switches (switches)</td><td>n/a</td>"), std::string::npos);
  // No run-time model: no network figures, so no Network section.
  EXPECT_TRUE(hidden(element_tag(dom, "network-section")));
  EXPECT_NE(dom.find("Mean run-time inflation</td><td>n/a</td>"), std::string::npos);
}

TEST(ReportBrowser, RunReportDrawsTheRunTimeModelsNetworkFigures) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  CommandRun r = run_trellis("sim --machine torus:8x8 --workload " + kTrace +
                             " --max-jobs 400 --sched easy --alloc random --runtime-model "
                             "hop-bytes --no-kill-at-limit --quiet --out " +
                             tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.output;
  // Gantt, timeline, slowdown, five occupancy maps and the two network charts.
  std::string dom = expect_renders(tmp.path() / "report.html", tmp.path(), 10);
  EXPECT_FALSE(hidden(element_tag(dom, "network-section")));
  auto metrics = nlohmann::json::parse(read_text(tmp.path() / "summary.json"))["metrics"];
  // Every job the model measured is a point: 400 are fewer than the scatter's cap.
  EXPECT_EQ(int_attribute(element_tag(dom, "network-inflation"), "data-points"),
            metrics["jobs"].get<int>());
  EXPECT_GE(metrics["mean_inflation"].get<double>(), 1);
  EXPECT_EQ(dom.find("Mean run-time inflation</td><td>n/a</td>"), std::string::npos);
  EXPECT_NE(dom.find("Mean run-time inflation</td><td>"), std::string::npos);
  expect_gantt_covers_run(dom, metrics, 64, tmp.path() / "jobs.csv");
}

TEST(ReportBrowser, ManyJobsAreSummedWithoutLosingBusyTime) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  // 10,000 jobs on 64 nodes scattered at random: more rectangles than the page draws one by one.
  CommandRun r = run_trellis("sim --machine torus:8x8 --workload " + kTrace +
                             " --sched easy --alloc random --quiet --out " + tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::string dom = expect_renders(tmp.path() / "report.html", tmp.path(), 8);
  EXPECT_NE(element_text(dom, "gantt-note").find("too many to draw one by one"), std::string::npos);
  auto summary = nlohmann::json::parse(read_text(tmp.path() / "summary.json"));
  expect_gantt_covers_run(dom, summary["metrics"], 64, tmp.path() / "jobs.csv");
}

TEST(ReportBrowser, GangRunDrawsOnlyTheSlotsJobsRan) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  CommandRun r = run_trellis(
      "sim --machine flat:64 --generate thesis:load=0.9,duration=20000,seed=3 "
      "--sched dqt-ffapa --alloc buddy --quiet --out " +
      tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::string dom = expect_renders(tmp.path() / "report.html", tmp.path(), 3);
  auto metrics = nlohmann::json::parse(read_text(tmp.path() / "summary.json"))["metrics"];
  // A gang run's utilization counts the processors in active partitions: its busy node-seconds.
  expect_gantt_covers_run(dom, metrics, 64);
  double busy = metrics["utilization"].get<double>() * 64 * metrics["makespan_s"].get<double>();
  // jobs.csv's start..end spans also count the slots a job was switched out: more than was busy.
  EXPECT_GT(csv_node_seconds(tmp.path() / "jobs.csv"), 1.2 * busy);
}

// A comparison page with runs that completed different jobs, as sim-compare may write it.
nlohmann::json differing_comparison() {
  nlohmann::json runs = nlohmann::json::array();
  for (int i = 0; i < 2; ++i)
    runs.push_back({{"label", i ? "random/easy" : "contiguous/easy"},
                    {"allocator", i ? "random" : "contiguous"},
                    {"policy", "easy"},
                    {"load", 1},
                    {"seed", -1},
                    {"dir", "out/x/runs/" + std::to_string(i + 1) + "-a-easy"},
                    {"completed_jobs", 100 - i * 7},
                    {"metrics",
                     {{"jobs", 100 - i * 7},
                      {"mean_wait_s", 10.5 + i},
                      {"mean_bounded_slowdown", 1.5},
                      {"utilization", 0.5},
                      {"mean_pairwise_hops", nullptr}}}});
  runs[0]["common_metrics"] = {
      {"mean_wait_s", 9.0}, {"mean_response_s", 20.0}, {"mean_bounded_slowdown", 1.2}};
  runs[1]["report"] = "runs/2-a-easy/report.html";
  return {{"title", "t"},
          {"about", {{"machine", "torus:8x8"}}},
          {"runs", runs},
          {"job_sets_differ", true},
          {"common_jobs", 90}};
}

TEST(ReportBrowser, ComparisonWarnsWhenJobSetsDiffer) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  fs::path page = tmp.path() / "compare.html";
  std::ofstream(page) << render_comparison_report(differing_comparison());
  std::string dom = expect_renders(page, tmp.path(), 4);
  EXPECT_NE(dom.find("did not all complete the same jobs (90 jobs"), std::string::npos);
  EXPECT_FALSE(hidden(element_tag(dom, "common-section")));
  EXPECT_NE(dom.find("<td>9</td><td>20</td><td>1.200</td>"), std::string::npos);
  EXPECT_NE(dom.find("href=\"runs/1-a-easy/report.html\""), std::string::npos);
  EXPECT_NE(dom.find("href=\"runs/2-a-easy/report.html\""), std::string::npos);
  // Without the job-set fields, no warning and no second table.
  nlohmann::json plain = differing_comparison();
  plain.erase("job_sets_differ");
  plain.erase("common_jobs");
  for (auto& run : plain["runs"]) {
    run.erase("common_metrics");
    run.erase("completed_jobs");
  }
  std::ofstream(page) << render_comparison_report(plain);
  dom = expect_renders(page, tmp.path(), 4);
  EXPECT_TRUE(hidden(element_tag(dom, "job-sets-warning")));
  EXPECT_TRUE(hidden(element_tag(dom, "common-section")));
}

TEST(ReportBrowser, ComparisonOfSeedsAndLoadsFitsThePageAndLinksEachRun) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  CommandRun r = run_trellis(
      "sim-compare --machine torus:8x8 --generate lublin:200 "
      "--alloc random,first-available --sched easy --load 1,2 --seed 1,2 --out " +
      tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.output;
  // Five bar charts with whiskers over seeds, five curves against load; no model, so none of the
  // network charts.
  std::string dom = expect_renders(tmp.path() / "compare.html", tmp.path(), 10);
  EXPECT_EQ(int_attribute(report_body(dom), "data-charts-expected"), 10);
  EXPECT_NE(dom.find("data-metric=\"makespan_s\""), std::string::npos);
  EXPECT_EQ(dom.find("data-metric=\"mean_inflation\""), std::string::npos);
  EXPECT_EQ(attribute(report_body(dom), "data-page-overflow"), "0");
  EXPECT_FALSE(hidden(element_tag(dom, "groups-section")));
  EXPECT_FALSE(hidden(element_tag(dom, "load-section")));
  auto data = nlohmann::json::parse(read_text(tmp.path() / "compare.json"));
  ASSERT_EQ(data["runs"].size(), 8u);
  for (const auto& run : data["runs"]) {
    std::string name = fs::path(run["dir"].get<std::string>()).filename().string();
    std::string href = "runs/" + name + "/report.html";
    EXPECT_NE(dom.find("href=\"" + href + "\""), std::string::npos) << href;
    EXPECT_TRUE(fs::exists(tmp.path() / href)) << href;
  }
}

TEST(ReportBrowser, ComparisonUnderARunTimeModelChartsItsNetworkFigures) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  CommandRun r = run_trellis("sim-compare --machine torus:8x8 --workload " + kTrace +
                             " --max-jobs 300 --alloc first-available,random --sched easy "
                             "--runtime-model congestion --no-kill-at-limit --out " +
                             tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.output;
  // Wait, slowdown, utilization, makespan, hops, inflation, hop-bytes and link load; no job got
  // more nodes than it asked for, so no internal fragmentation chart.
  std::string dom = expect_renders(tmp.path() / "compare.html", tmp.path(), 8);
  EXPECT_EQ(int_attribute(report_body(dom), "data-charts-expected"), 8);
  for (const char* metric :
       {"makespan_s", "mean_inflation", "mean_hop_bytes", "mean_max_link_load"})
    EXPECT_NE(dom.find("data-metric=\"" + std::string(metric) + "\""), std::string::npos) << metric;
  EXPECT_EQ(dom.find("data-metric=\"internal_fragmentation\""), std::string::npos);
  EXPECT_NE(dom.find("<th title=\"mean run-time inflation"), std::string::npos);
  // Each run's own report draws its Network section.
  auto data = nlohmann::json::parse(read_text(tmp.path() / "compare.json"));
  ASSERT_EQ(data["runs"].size(), 2u);
  std::string run_dom =
      expect_renders(tmp.path() / data["runs"][1]["report"].get<std::string>(), tmp.path(), 10);
  EXPECT_FALSE(hidden(element_tag(run_dom, "network-section")));
}

// --metrics-only measures no hops: no empty hops chart.
TEST(ReportBrowser, ComparisonWithoutPlacementsDrawsNoHopsChart) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  CommandRun r = run_trellis(
      "sim-compare --machine torus:8x8 --generate lublin:100 --alloc first-available,random "
      "--sched easy --metrics-only --out " +
      tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::string dom = expect_renders(tmp.path() / "compare.html", tmp.path(), 4);
  EXPECT_EQ(int_attribute(report_body(dom), "data-charts-expected"), 4);  // wait ... makespan
  EXPECT_EQ(dom.find("data-metric=\"mean_pairwise_hops\""), std::string::npos);
  EXPECT_NE(dom.find("data-metric=\"makespan_s\""), std::string::npos);
}

TEST(ReportBrowser, CalendarAxisWhenTheTraceIsDated) {
  if (!have_chromium()) GTEST_SKIP() << "/usr/bin/chromium is not installed";
  TempDir tmp;
  CommandRun r = run_trellis("sim --machine torus:8x8 --workload " + kTrace +
                             " --max-jobs 200 --quiet --out " + tmp.path().string());
  ASSERT_EQ(r.status, 0) << r.output;
  // Put a trace start date into the page's data, as a dated trace's run does.
  std::string html = read_text(tmp.path() / "report.html");
  const std::string key = "\"about\":{";
  size_t at = html.find(key);
  ASSERT_NE(at, std::string::npos);
  html.insert(at + key.size(), "\"unix_start_time\":749458803,");
  // And metrics the page does not know, one not computed (null) and one an object.
  const std::string metrics_key = "\"metrics\":{";
  at = html.find(metrics_key);
  ASSERT_NE(at, std::string::npos);
  html.insert(at + metrics_key.size(), "\"future_metric_s\":null,\"users\":{\"7\":{\"jobs\":3}},");
  const std::string hops_key = "\"mean_pairwise_hops\":";
  at = html.find(hops_key, at);
  ASSERT_NE(at, std::string::npos);
  size_t value_end = html.find_first_of(",}", at);
  html.replace(at + hops_key.size(), value_end - at - hops_key.size(), "null");
  fs::path dated = tmp.path() / "dated.html";
  std::ofstream(dated) << html;
  std::string dom = expect_renders(dated, tmp.path(), 3);
  EXPECT_EQ(attribute(element_tag(dom, "gantt"), "data-time-unit"), "date");
  EXPECT_NE(dom.find("<td class=\"text\">future_metric_s</td><td>n/a</td>"), std::string::npos);
  EXPECT_NE(dom.find("<td class=\"text\">Mean pairwise hops (hops)</td><td>n/a</td>"),
            std::string::npos);
  EXPECT_NE(dom.find("<td class=\"text\">users</td><td>{\"7\":{\"jobs\":3}}</td>"),
            std::string::npos);
  auto summary = nlohmann::json::parse(read_text(tmp.path() / "summary.json"));
  expect_gantt_covers_run(dom, summary["metrics"], 64);
}

}  // namespace
}  // namespace trellis
