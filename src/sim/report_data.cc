#include "sim/report_data.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "sched/scan.h"

namespace trellis {

namespace {

using nlohmann::json;

json gantt(const SimResult& result, size_t max_rectangles) {
  size_t total = 0;
  for (const JobRecord& j : result.jobs) total += j.runs.size();
  std::vector<size_t> order(result.jobs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (total > max_rectangles) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const JobRecord &x = result.jobs[a], &y = result.jobs[b];
      return x.nodes * (x.end - x.start) > y.nodes * (y.end - y.start);
    });
  }
  json rects = json::array();
  size_t shown_jobs = 0, shown = 0;
  for (size_t i : order) {
    const JobRecord& j = result.jobs[i];
    if (shown + j.runs.size() > max_rectangles) continue;
    shown += j.runs.size();
    ++shown_jobs;
    for (auto [first, last] : j.runs)
      rects.push_back({j.start, j.end, first, last + 1, j.id, j.nodes, j.wait()});
  }
  return {{"rects", std::move(rects)},
          {"shown_jobs", shown_jobs},
          {"total_jobs", result.jobs.size()},
          {"shown_rectangles", shown},
          {"total_rectangles", total}};
}

json timeline(const SimResult& result, size_t max_points) {
  const auto& tl = result.timeline;
  size_t stride =
      std::max<size_t>(1, (tl.size() + max_points - 1) / std::max<size_t>(1, max_points));
  json t = json::array(), busy = json::array(), queued = json::array(), box = json::array();
  for (size_t i = 0; i < tl.size(); i += stride) {
    // The busiest sample of each stride, so thinning does not hide peaks.
    size_t pick = i;
    for (size_t k = i; k < std::min(tl.size(), i + stride); ++k)
      if (tl[k].busy_nodes > tl[pick].busy_nodes) pick = k;
    t.push_back(tl[i].time);
    busy.push_back(tl[pick].busy_nodes);
    queued.push_back(tl[pick].queued_jobs);
    box.push_back(tl[pick].largest_free_box);
  }
  if (!tl.empty() && (tl.size() - 1) % stride != 0) {
    t.push_back(tl.back().time);
    busy.push_back(tl.back().busy_nodes);
    queued.push_back(tl.back().queued_jobs);
    box.push_back(tl.back().largest_free_box);
  }
  return {{"time", std::move(t)},
          {"busy", std::move(busy)},
          {"queued", std::move(queued)},
          {"largest_free_box", std::move(box)},
          {"thinned", stride > 1}};
}

json slowdown(const SimResult& result) {
  const std::vector<double> edges = {1, 2, 5, 10, 100};
  json bins = {"1", "1-2", "2-5", "5-10", "10-100", ">100"};
  int top_class = 0;
  for (const JobRecord& j : result.jobs) top_class = std::max(top_class, size_class(j.nodes));
  std::vector<std::vector<int>> counts(bins.size(), std::vector<int>(top_class + 1, 0));
  for (const JobRecord& j : result.jobs) {
    double b = j.bounded_slowdown();
    size_t bin =
        b <= 1.0
            ? 0
            : static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), b) - edges.begin());
    counts[std::min(bin, bins.size() - 1)][size_class(j.nodes)]++;
  }
  json classes = json::array();
  for (int c = 0; c <= top_class; ++c) {
    int hi = 1 << c, lo = c == 0 ? 1 : (1 << (c - 1)) + 1;
    classes.push_back(lo == hi ? std::to_string(hi)
                               : std::to_string(lo) + "-" + std::to_string(hi));
  }
  return {{"classes", std::move(classes)}, {"bins", std::move(bins)}, {"counts", counts}};
}

json occupancy(const Machine& machine, const SimResult& result, const RunSummary& summary,
               int instants) {
  const Torus* torus = machine.torus();
  json out = json::array();
  bool recorded = std::any_of(result.jobs.begin(), result.jobs.end(),
                              [](const JobRecord& j) { return !j.runs.empty(); });
  if (!torus || !recorded) return out;
  int x_extent = torus->extent(0);
  int y_extent = torus->dims() > 1 ? torus->extent(1) : 1;
  for (int k = 1; k <= instants; ++k) {
    Seconds at = summary.first_submit + summary.makespan * k / (instants + 1);
    json cells = json::array();
    int busy = 0;
    for (const JobRecord& j : result.jobs) {
      if (j.start > at || j.end <= at) continue;
      for (auto [first, last] : j.runs) {
        for (NodeId id = first; id <= last; ++id) {
          Coords c = torus->coords(id);
          int slice = id / (x_extent * y_extent);  // z and any higher axes, folded
          int col = c[0] + slice * (x_extent + 1);
          int row = torus->dims() > 1 ? c[1] : 0;
          cells.push_back({col, row, j.id % 20, j.id});
          ++busy;
        }
      }
    }
    out.push_back({{"time", at}, {"busy", busy}, {"cells", std::move(cells)}});
  }
  return out;
}

}  // namespace

json run_report_data(const Machine& machine, const SimResult& result, const RunSummary& summary,
                     const json& about, const ReportLimits& limits) {
  json data;
  data["about"] = about;
  data["metrics"] = to_json(summary);
  data["nodes"] = machine.node_count();
  data["gantt"] = gantt(result, limits.max_rectangles);
  data["timeline"] = timeline(result, limits.max_timeline_points);
  data["slowdown"] = slowdown(result);
  if (const Torus* torus = machine.torus()) {
    int x = torus->extent(0), y = torus->dims() > 1 ? torus->extent(1) : 1;
    int slices = torus->node_count() / (x * y);
    data["occupancy"] = {
        {"width", slices * (x + 1) - 1},
        {"height", y},
        {"slices", slices},
        {"instants", occupancy(machine, result, summary, limits.occupancy_instants)}};
  }
  return data;
}

}  // namespace trellis
