// The run report's data (sim/report_data.h) on small hand-made runs: the Gantt chart holds every
// busy node-second whether it draws jobs or sums them into bands, gang jobs' intervals never share
// a node, and the occupancy instants hold exactly the nodes busy then.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "sched/gang/registry.h"
#include "sim/gang/gang_simulator.h"
#include "sim/html_report.h"
#include "sim/report_data.h"
#include "topology/curve.h"

namespace trellis {
namespace {

using nlohmann::json;

JobRecord job(JobId id, Seconds start, Seconds end, std::vector<std::pair<NodeId, NodeId>> runs) {
  JobRecord j;
  j.id = id;
  j.submit = start;
  j.start = start;
  j.end = end;
  j.run_time = end - start;
  j.runs = std::move(runs);
  for (auto [first, last] : j.runs) j.nodes += last - first + 1;
  j.requested_nodes = j.nodes;
  return j;
}

// A run on 16 nodes of many short jobs tiling the machine: jobs on nodes [4k, 4k+4) back to back,
// with odd lengths so they cross the bands' bin edges anywhere.
SimResult tiled_run(int jobs_per_row) {
  SimResult r;
  r.machine_nodes = 16;
  JobId id = 1;
  for (int row = 0; row < 4; ++row) {
    Seconds t = row * 3.5;
    for (int k = 0; k < jobs_per_row; ++k) {
      Seconds length = 7 + (k * 13 + row * 5) % 29;
      r.jobs.push_back(job(id++, t, t + length, {{row * 4, row * 4 + 3}}));
      t += length + (k % 3 == 0 ? 11 : 0);  // an idle gap now and then
    }
  }
  std::sort(r.jobs.begin(), r.jobs.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.start < b.start; });
  return r;
}

double expected_busy(const SimResult& r) {
  double busy = 0;
  for (const JobRecord& j : r.jobs)
    for (auto [from, to] : held_intervals(j)) busy += j.nodes * (to - from);
  return busy;
}

// Node-seconds drawn: rectangles whole, bands by their busy share.
double drawn_busy(const json& gantt) {
  double busy = 0;
  for (const json& r : gantt["rects"])
    busy += (r[1].get<double>() - r[0].get<double>()) * (r[3].get<int>() - r[2].get<int>());
  for (const json& b : gantt["bands"])
    busy += (b[1].get<double>() - b[0].get<double>()) * (b[3].get<int>() - b[2].get<int>()) *
            b[4].get<double>();
  return busy;
}

TEST(HtmlEscape, EscapesTheFiveMarkupCharactersAndKeepsTheRest) {
  EXPECT_EQ(html_escape("a < b && c > \"d\" 'e'"),
            "a &lt; b &amp;&amp; c &gt; &quot;d&quot; &#39;e&#39;");
  EXPECT_EQ(html_escape("torus:8x8 n[0-3] job 12 \u00e9"), "torus:8x8 n[0-3] job 12 \u00e9");
  EXPECT_EQ(html_escape(""), "");
}

TEST(ReportData, FewJobsAreDrawnOneRectanglePerRunAndInterval) {
  Machine machine = *Machine::parse("torus:4x4");
  SimResult r;
  r.machine_nodes = 16;
  r.jobs.push_back(job(1, 0, 100, {{0, 3}, {8, 9}}));
  r.jobs.push_back(job(2, 10, 50, {{4, 7}}));
  r.jobs[1].timed_out = true;
  json data = run_report_data(machine, r, summarize(r), {{"workload", "hand-made"}});
  const json& g = data["gantt"];
  EXPECT_EQ(g["mode"], "jobs");
  ASSERT_EQ(g["rects"].size(), 3u);
  EXPECT_EQ(g["rects"][0], json({0.0, 100.0, 0, 4, 1, 6, 0.0, 0}));
  EXPECT_EQ(g["rects"][1], json({0.0, 100.0, 8, 10, 1, 6, 0.0, 0}));
  EXPECT_EQ(g["rects"][2], json({10.0, 50.0, 4, 8, 2, 4, 0.0, 1}));
  EXPECT_DOUBLE_EQ(g["busy_node_seconds"].get<double>(), 6 * 100 + 4 * 40);
  EXPECT_DOUBLE_EQ(g["t_min"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(g["t_max"].get<double>(), 100);
}

TEST(ReportData, AggregationKeepsEveryBusyNodeSecond) {
  Machine machine = *Machine::parse("torus:4x4");
  SimResult r = tiled_run(60);
  ReportLimits limits;
  limits.max_rectangles = 40;  // 240 jobs: most must be summed
  limits.gantt_time_bins = 37;
  limits.gantt_node_rows = 3;  // rows of 5, 5 and 6 nodes cut across the jobs' node ranges
  json g = run_report_data(machine, r, summarize(r), json::object(), limits)["gantt"];
  ASSERT_EQ(g["mode"], "aggregated");
  EXPECT_LE(g["rects"].size(), 20u);
  EXPECT_GT(g["bands"].size(), 0u);
  double busy = expected_busy(r);
  EXPECT_NEAR(g["busy_node_seconds"].get<double>(), busy, 1e-9 * busy);
  EXPECT_NEAR(drawn_busy(g), busy, 1e-9 * busy);
  Seconds t_min = g["t_min"], t_max = g["t_max"];
  for (const json& b : g["bands"]) {
    EXPECT_GE(b[0].get<double>(), t_min - 1e-9);
    EXPECT_LE(b[1].get<double>(), t_max + 1e-9);
    // Jobs never overlap here, so no cell can be more than fully busy.
    EXPECT_GT(b[4].get<double>(), 0);
    EXPECT_LE(b[4].get<double>(), 1 + 1e-9);
  }
}

TEST(ReportData, AggregatedBandsFollowWhereTheWorkWas) {
  // One node busy over the first half only: its band must be full there and absent after.
  Machine machine = *Machine::parse("torus:4x4");
  SimResult r;
  r.machine_nodes = 16;
  for (int k = 0; k < 50; ++k) r.jobs.push_back(job(k + 1, k, k + 1, {{5, 5}}));
  r.jobs.push_back(job(99, 0, 100, {{0, 0}}));  // stretches the run to 100 s
  ReportLimits limits;
  limits.max_rectangles = 10;
  limits.gantt_time_bins = 10;
  limits.gantt_node_rows = 16;
  json g = run_report_data(machine, r, summarize(r), json::object(), limits)["gantt"];
  ASSERT_EQ(g["mode"], "aggregated");
  bool found = false;
  for (const json& b : g["bands"]) {
    if (b[2] != 5) continue;
    found = true;
    EXPECT_DOUBLE_EQ(b[0].get<double>(), 0);
    EXPECT_DOUBLE_EQ(b[1].get<double>(), 50);
    EXPECT_DOUBLE_EQ(b[4].get<double>(), 1);
  }
  EXPECT_TRUE(found);
}

// A real gang run through the bridge: time-shared jobs on a small flat machine.
SimResult gang_run(const Machine& machine, double quantum) {
  std::vector<Job> jobs;
  for (int k = 0; k < 40; ++k) {
    Job j;
    j.id = k + 1;
    j.submit = k * 20.0;
    j.run_time = 30 + (k * 37) % 200;
    j.request.nodes = 1 << (k % 4);
    jobs.push_back(j);
  }
  const int processors = machine.node_count();
  auto scheduler = gang::GangPolicyRegistry::builtin().create("dqt-ffapa", processors);
  EXPECT_TRUE(scheduler.ok());
  gangsim::GangSimConfig config;
  config.record_activity = true;
  auto run = gangsim::simulate_time_shared(machine, **scheduler, Curve::identity(processors), jobs,
                                           quantum, config, true);
  EXPECT_TRUE(run.ok());
  return run->run;
}

TEST(ReportData, GangJobsHoldNodesOnlyInTheirSlotsAndNeverTogether) {
  Machine machine = *Machine::parse("flat:8");
  const double quantum = 10;
  SimResult r = gang_run(machine, quantum);
  ASSERT_EQ(r.jobs.size(), 40u);
  bool time_shared = false;
  std::map<NodeId, std::vector<std::pair<Seconds, Seconds>>> by_node;
  for (const JobRecord& j : r.jobs) {
    time_shared |= j.running_intervals().size() > 1;
    double ran = 0;
    Seconds previous_end = j.start;
    for (auto [from, to] : held_intervals(j)) {
      EXPECT_GE(from, previous_end) << "job " << j.id;
      EXPECT_LT(from, to) << "job " << j.id;
      previous_end = to;
      ran += to - from;
      for (auto [first, last] : j.runs)
        for (NodeId n = first; n <= last; ++n) by_node[n].emplace_back(from, to);
    }
    EXPECT_LE(previous_end, j.end);
    // Switched in exactly as long as its work, in whole slots.
    EXPECT_DOUBLE_EQ(ran, std::ceil(j.run_time / quantum) * quantum) << "job " << j.id;
  }
  EXPECT_TRUE(time_shared) << "the workload should make the scheduler time-share";
  for (auto& [node, intervals] : by_node) {
    std::sort(intervals.begin(), intervals.end());
    for (size_t i = 1; i < intervals.size(); ++i)
      EXPECT_LE(intervals[i - 1].second, intervals[i].first) << "node " << node;
  }
  // The report draws those intervals, so its rectangles are disjoint per node too.
  json g = run_report_data(machine, r, summarize(r), json::object())["gantt"];
  ASSERT_EQ(g["mode"], "jobs");
  std::map<int, std::vector<std::pair<double, double>>> drawn;
  for (const json& rect : g["rects"])
    for (int n = rect[2]; n < rect[3].get<int>(); ++n) drawn[n].emplace_back(rect[0], rect[1]);
  for (auto& [node, intervals] : drawn) {
    std::sort(intervals.begin(), intervals.end());
    for (size_t i = 1; i < intervals.size(); ++i)
      EXPECT_LE(intervals[i - 1].second, intervals[i].first) << "node " << node;
  }
  EXPECT_NEAR(drawn_busy(g), expected_busy(r), 1e-9 * expected_busy(r));
}

TEST(ReportData, GangSpansPastTheCapRunToTheEnd) {
  Machine machine = *Machine::parse("flat:8");
  std::vector<Job> jobs;
  for (int k = 0; k < 6; ++k) {
    Job j;
    j.id = k + 1;
    j.run_time = 100;
    j.request.nodes = 8;  // all on the whole machine: they take turns
    jobs.push_back(j);
  }
  auto scheduler = gang::GangPolicyRegistry::builtin().create("dqt-ffapa", 8);
  ASSERT_TRUE(scheduler.ok());
  gangsim::GangSimConfig config;
  config.record_activity = true;
  config.max_active_spans = 5;
  auto run = gangsim::simulate_time_shared(machine, **scheduler, Curve::identity(8), jobs, 10,
                                           config, true);
  ASSERT_TRUE(run.ok());
  const gangsim::GangSimResult* gang = &run->gang;
  size_t recorded = 0;
  bool cut = false;
  for (const auto& o : gang->jobs) {
    recorded += o.active_spans.size();
    cut |= !o.spans_complete;
  }
  EXPECT_EQ(recorded, 5u);
  EXPECT_TRUE(cut);
  const SimResult& r = run->run;
  for (const JobRecord& j : r.jobs) {
    auto intervals = held_intervals(j);
    EXPECT_DOUBLE_EQ(intervals.back().second, j.end) << "job " << j.id;
  }
}

TEST(ReportData, OccupancyInstantsHoldExactlyTheBusyNodes) {
  Machine machine = *Machine::parse("torus:4x4x2");
  SimResult r = tiled_run(30);
  r.machine_nodes = 32;
  // A second machine slice busy over a stretch, in two pieces (a job's runs).
  r.jobs.push_back(job(500, 40, 400, {{16, 19}, {28, 31}}));
  for (const JobRecord& j : r.jobs) r.timeline.push_back({j.start, 0, 0, false, -1});
  std::sort(r.timeline.begin(), r.timeline.end(),
            [](const TimelineSample& a, const TimelineSample& b) { return a.time < b.time; });
  ReportLimits limits;
  limits.max_occupancy_instants = 25;
  json occ = run_report_data(machine, r, summarize(r), json::object(), limits)["occupancy"];
  EXPECT_EQ(occ["slices"], 2);
  EXPECT_EQ(occ["width"], 9);  // two 4-wide slices and a gap column
  EXPECT_EQ(occ["height"], 4);
  ASSERT_EQ(occ["cells"].size(), 32u);
  EXPECT_EQ(occ["cells"][17], json({6, 0}));  // (1, 0, 1): second slice, after the gap
  const json& instants = occ["instants"];
  ASSERT_GT(instants.size(), 4u);
  EXPECT_LE(instants.size(), 25u + 4u);  // the thinned instants plus the quantiles
  ASSERT_EQ(occ["maps"].size(), 4u);
  for (const json& i : occ["maps"]) EXPECT_LT(i.get<size_t>(), instants.size());
  double previous = -1;
  for (const json& inst : instants) {
    Seconds t = inst["time"];
    EXPECT_GT(t, previous);
    previous = t;
    ASSERT_EQ(inst["jobs"].size(), 32u);
    std::vector<long> expected(32, -1);
    for (const JobRecord& j : r.jobs)
      if (j.start <= t && t < j.end)
        for (auto [first, last] : j.runs)
          for (NodeId n = first; n <= last; ++n) expected[n] = j.id;
    EXPECT_EQ(inst["jobs"].get<std::vector<long>>(), expected) << "t = " << t;
    EXPECT_EQ(inst["busy"],
              std::count_if(expected.begin(), expected.end(), [](long h) { return h >= 0; }));
  }
}

TEST(ReportData, TimelineCountsBusyNodesFromTheJobsAndThinsFaithfully) {
  Machine machine = *Machine::parse("torus:4x4");
  SimResult r;
  r.machine_nodes = 16;
  r.jobs.push_back(job(1, 0, 90, {{0, 3}}));
  r.jobs.push_back(job(2, 42, 43, {{4, 15}}));     // a one-second peak of 16 busy nodes
  r.jobs.push_back(job(3, 1100, 1101, {{0, 3}}));  // after a long idle gap
  // The scheduler's samples: every second up to 99 (the job ends with nobody waiting have none).
  for (int i = 0; i < 100; ++i)
    r.timeline.push_back({static_cast<Seconds>(i), 4, i % 3, false, -1});
  ReportLimits limits;
  limits.max_timeline_points = 20;
  json tl = run_report_data(machine, r, summarize(r), json::object(), limits)["timeline"];
  EXPECT_TRUE(tl["thinned"].get<bool>());
  ASSERT_LE(tl["time"].size(), 20u);
  std::vector<double> time = tl["time"];
  std::vector<int> busy = tl["busy"];
  EXPECT_TRUE(std::is_sorted(time.begin(), time.end()));
  EXPECT_NE(std::find(busy.begin(), busy.end(), 16), busy.end()) << "the peak was thinned away";
  // Idle over the gap, busy at 1100, idle again at the end.
  size_t at_1100 = std::find(time.begin(), time.end(), 1100.0) - time.begin();
  ASSERT_LT(at_1100, time.size());
  ASSERT_GE(at_1100, 1u);
  EXPECT_EQ(busy[at_1100 - 1], 0);
  EXPECT_EQ(busy[at_1100], 4);
  EXPECT_EQ(time.back(), 1101);
  EXPECT_EQ(busy.back(), 0);
}

// The scatter keeps a sample of the jobs a run-time model measured; the means by size and the link
// load histogram count all of them. Link loads 0, 1, 2, 3, 4 in turn over four bins of width 1:
// loads 3 and 4 share the last bin (the largest lands in it, not past it).
TEST(ReportData, NetworkFiguresAreSampledForTheScatterAndCountedInFull) {
  Machine machine = *Machine::parse("torus:4x4");
  SimResult r = tiled_run(12);  // 48 jobs of 4 nodes
  EXPECT_FALSE(run_report_data(machine, r, summarize(r), json::object()).contains("network"));
  r.jobs[0].nodes = 1;  // a second size
  for (JobRecord& j : r.jobs)
    j.set_network({.inflation = 1.0 + j.id % 3,
                   .hop_bytes = 8.0 * j.id,
                   .max_link_load = static_cast<double>(j.id % 5)});
  ReportLimits limits;
  limits.max_network_points = 10;
  limits.link_load_bins = 4;
  json net = run_report_data(machine, r, summarize(r), json::object(), limits)["network"];
  EXPECT_EQ(net["measured"], 48);
  EXPECT_TRUE(net["sampled"].get<bool>());
  EXPECT_LE(net["jobs"].size(), 10u);
  EXPECT_GE(net["jobs"].size(), 5u);
  EXPECT_EQ(net["jobs"][0][0], r.jobs[0].nodes);
  EXPECT_EQ(net["jobs"][0][4], r.jobs[0].id);
  std::vector<long> counts = net["link_load"]["counts"];
  std::vector<double> edges = net["link_load"]["edges"];
  ASSERT_EQ(counts.size(), 4u);
  EXPECT_EQ(edges, (std::vector<double>{0, 1, 2, 3, 4}));
  std::vector<long> expected(4, 0);
  for (const JobRecord& j : r.jobs) ++expected[std::min<long>(3, j.id % 5)];
  EXPECT_EQ(counts, expected);
  ASSERT_EQ(net["by_size"].size(), 2u);  // 1 node and 4 nodes
  EXPECT_EQ(net["by_size"][0][0], 1);
  EXPECT_DOUBLE_EQ(net["by_size"][0][1].get<double>(), 1.0 + r.jobs[0].id % 3);
  EXPECT_EQ(net["by_size"][0][2].get<long>() + net["by_size"][1][2].get<long>(), 48);
}

TEST(ReportData, PagesCarryTheDataTheyWereGiven) {
  Machine machine = *Machine::parse("torus:4x4");
  SimResult r = tiled_run(3);
  json about = {{"workload", "w</script>x"}, {"unix_start_time", 749458803}};
  std::string html = render_run_report(run_report_data(machine, r, summarize(r), about));
  EXPECT_NE(html.find("\"unix_start_time\":749458803"), std::string::npos);
  // The workload's name cannot end the data block early.
  EXPECT_EQ(html.find("w</script>x"), std::string::npos);
  EXPECT_NE(html.find("data-charts-rendered=\"0\""), std::string::npos);
}

}  // namespace
}  // namespace trellis
