#include "sim/report_data.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "sched/scan.h"

namespace trellis {

namespace {

using nlohmann::json;

double node_seconds(const JobRecord& j) {
  double nodes = 0, seconds = 0;
  for (auto [first, last] : j.runs) nodes += last - first + 1;
  for (auto [from, to] : held_intervals(j)) seconds += to - from;
  return nodes * seconds;
}

// Busy node-seconds summed over a grid of time bins x node rows. Each interval costs O(rows it
// touches): the bins it covers whole go through a difference array per row.
class BusyGrid {
 public:
  BusyGrid(Seconds t_min, Seconds t_max, int bins, int nodes, int rows)
      : t_min_(t_min),
        width_((t_max - t_min) / bins),
        bins_(bins),
        nodes_(nodes),
        rows_(rows),
        partial_(static_cast<size_t>(bins) * rows, 0.0),
        whole_(static_cast<size_t>(bins + 1) * rows, 0.0) {}

  // First node of row `r`; row r holds nodes [row_start(r), row_start(r + 1)).
  int row_start(int r) const { return static_cast<int>(static_cast<long>(r) * nodes_ / rows_); }
  Seconds bin_start(int b) const { return t_min_ + width_ * b; }
  Seconds bin_width() const { return width_; }

  void add(Seconds from, Seconds to, int first_node, int end_node) {
    if (to <= from) return;
    int b0 = bin_of(from), b1 = bin_of(to);
    if (b1 > b0 && to <= bin_start(b1)) --b1;  // `to` on a boundary ends in the bin before
    int r0 = row_of(first_node), r1 = row_of(end_node - 1);
    for (int r = r0; r <= r1; ++r) {
      double k = std::min(end_node, row_start(r + 1)) - std::max(first_node, row_start(r));
      if (b0 == b1) {
        partial_[index(b0, r)] += k * (to - from);
        continue;
      }
      partial_[index(b0, r)] += k * (bin_start(b0 + 1) - from);
      partial_[index(b1, r)] += k * (to - bin_start(b1));
      if (b1 > b0 + 1) {
        whole_[static_cast<size_t>(b0 + 1) * rows_ + r] += k;
        whole_[static_cast<size_t>(b1) * rows_ + r] -= k;
      }
    }
  }

  // Bands [from, to, first node, end node, busy fraction], equal neighbours along time merged.
  json bands() const {
    json out = json::array();
    for (int r = 0; r < rows_; ++r) {
      double nodes = row_start(r + 1) - row_start(r), running = 0;
      int open = -1;
      double open_fill = 0;
      auto close = [&](int end_bin) {
        if (open >= 0 && open_fill > 0)
          out.push_back({bin_start(open), end_bin == bins_ ? bin_start(bins_) : bin_start(end_bin),
                         row_start(r), row_start(r + 1), open_fill});
        open = -1;
      };
      for (int b = 0; b < bins_; ++b) {
        running += whole_[static_cast<size_t>(b) * rows_ + r];
        double fill = (partial_[index(b, r)] + running * width_) / (nodes * width_);
        if (open >= 0 && std::abs(fill - open_fill) <= 1e-12 * std::max(1.0, fill)) continue;
        close(b);
        open = b;
        open_fill = fill;
      }
      close(bins_);
    }
    return out;
  }

 private:
  int bin_of(Seconds t) const {
    return std::clamp(static_cast<int>(std::floor((t - t_min_) / width_)), 0, bins_ - 1);
  }
  int row_of(int node) const {
    return std::clamp(static_cast<int>(static_cast<long>(node) * rows_ / nodes_), 0, rows_ - 1);
  }
  size_t index(int bin, int row) const { return static_cast<size_t>(bin) * rows_ + row; }

  Seconds t_min_, width_;
  int bins_, nodes_, rows_;
  std::vector<double> partial_;  // node-seconds per (bin, row) from intervals' partial bins
  std::vector<double> whole_;    // nodes per (bin, row) covering whole bins, as differences
};

json gantt(const SimResult& result, const RunSummary& summary, int node_count,
           const ReportLimits& limits) {
  const Seconds t_min = summary.first_submit, t_max = std::max(summary.last_end, t_min);
  size_t total = 0;
  double busy = 0;
  for (const JobRecord& j : result.jobs) {
    total += j.runs.size() * held_intervals(j).size();
    busy += node_seconds(j);
  }
  json rects = json::array(), bands = json::array();
  auto draw_job = [&](const JobRecord& j) {
    for (auto [from, to] : held_intervals(j))
      for (auto [first, last] : j.runs)
        rects.push_back({from, to, first, last + 1, j.id, j.nodes, j.wait(), j.timed_out ? 1 : 0});
  };
  size_t shown_jobs = 0;
  const bool aggregate = total > limits.max_rectangles && t_max > t_min && node_count > 0;
  json out;
  if (!aggregate) {
    for (const JobRecord& j : result.jobs) draw_job(j);
    shown_jobs = result.jobs.size();
  } else {
    const int bins = std::max(1, limits.gantt_time_bins);
    const int rows = std::clamp(limits.gantt_node_rows, 1, node_count);
    BusyGrid grid(t_min, t_max, bins, node_count, rows);
    // Jobs whose every interval spans two bins or more, most node-seconds first, stay jobs while
    // half the budget lasts; a shorter one would be a sliver.
    std::vector<size_t> order(result.jobs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::vector<double> weight(result.jobs.size());
    for (size_t i = 0; i < result.jobs.size(); ++i) weight[i] = node_seconds(result.jobs[i]);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return weight[a] > weight[b]; });
    size_t budget = limits.max_rectangles / 2, used = 0;
    for (size_t i : order) {
      const JobRecord& j = result.jobs[i];
      auto intervals = held_intervals(j);
      bool long_enough = std::all_of(intervals.begin(), intervals.end(), [&](const auto& iv) {
        return iv.second - iv.first >= 2 * grid.bin_width();
      });
      size_t cost = intervals.size() * j.runs.size();
      if (long_enough && used + cost <= budget) {
        used += cost;
        ++shown_jobs;
        draw_job(j);
        continue;
      }
      for (auto [from, to] : intervals)
        for (auto [first, last] : j.runs) grid.add(from, to, first, last + 1);
    }
    bands = grid.bands();
    out["band_seconds"] = grid.bin_width();
    out["band_rows"] = rows;
  }
  out["t_min"] = t_min;
  out["t_max"] = t_max;
  out["mode"] = aggregate ? "aggregated" : "jobs";
  out["rects"] = std::move(rects);
  out["bands"] = std::move(bands);
  out["shown_jobs"] = shown_jobs;
  out["total_jobs"] = result.jobs.size();
  out["total_rectangles"] = total;
  out["busy_node_seconds"] = busy;
  return out;
}

// The busy nodes over time from the jobs' own intervals (exact whatever the scheduler sampled:
// a run's timeline has no sample when a job ends with nobody waiting), with the queue length and
// largest free box of the timeline's latest sample at or before each instant.
std::vector<TimelineSample> busy_timeline(const SimResult& result) {
  std::vector<std::pair<Seconds, int>> changes;
  for (const JobRecord& j : result.jobs) {
    int nodes = 0;
    for (auto [first, last] : j.runs) nodes += last - first + 1;
    if (j.runs.empty()) nodes = j.nodes;
    for (auto [from, to] : held_intervals(j)) {
      changes.emplace_back(from, nodes);
      changes.emplace_back(to, -nodes);
    }
  }
  std::sort(changes.begin(), changes.end());
  std::vector<TimelineSample> out;
  const auto& tl = result.timeline;
  size_t c = 0, s = 0;
  int busy = 0;
  TimelineSample state;
  while (c < changes.size() || s < tl.size()) {
    Seconds t = c < changes.size() && (s >= tl.size() || changes[c].first <= tl[s].time)
                    ? changes[c].first
                    : tl[s].time;
    for (; c < changes.size() && changes[c].first == t; ++c) busy += changes[c].second;
    for (; s < tl.size() && tl[s].time == t; ++s) state = tl[s];
    // Before the first sample: whether boxes are recorded at all (-1: no), as the page asks.
    if (s == 0) state.largest_free_box = tl.empty() ? -1 : tl[0].largest_free_box;
    state.time = t;
    state.busy_nodes = busy;
    out.push_back(state);
  }
  return out;
}

json timeline(const SimResult& result, size_t max_points) {
  const std::vector<TimelineSample> tl = busy_timeline(result);
  // Thinned by time: in each of max_points / 3 equal stretches of the run, its first sample, its
  // busiest (so peaks stay) and its last (so the state held into the next stretch, across an idle
  // gap say, is the one the run was in).
  const size_t stretches = std::max<size_t>(1, max_points / 3);
  const bool thinned = tl.size() > std::max<size_t>(1, max_points);
  const Seconds t0 = tl.empty() ? 0 : tl.front().time;
  const Seconds width = tl.empty() ? 0 : (tl.back().time - t0) / static_cast<double>(stretches);
  json t = json::array(), busy = json::array(), queued = json::array(), box = json::array();
  auto add = [&](const TimelineSample& s) {
    t.push_back(s.time);
    busy.push_back(s.busy_nodes);
    queued.push_back(s.queued_jobs);
    box.push_back(s.largest_free_box);
  };
  auto stretch_of = [&](Seconds time) {
    return width > 0 ? std::min(stretches - 1, static_cast<size_t>((time - t0) / width)) : 0;
  };
  for (size_t first = 0; first < tl.size();) {
    size_t last = first, peak = first;
    if (thinned)
      while (last + 1 < tl.size() && stretch_of(tl[last + 1].time) == stretch_of(tl[first].time))
        if (tl[++last].busy_nodes > tl[peak].busy_nodes) peak = last;
    add(tl[first]);
    if (peak != first) add(tl[peak]);
    if (last != peak) add(tl[last]);
    first = last + 1;
  }
  return {{"time", std::move(t)},
          {"busy", std::move(busy)},
          {"queued", std::move(queued)},
          {"largest_free_box", std::move(box)},
          {"thinned", thinned}};
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

// The instants at which the occupancy is recorded: the timeline's (after each scheduling pass),
// thinned to at most `limit` by keeping the busiest of each stretch, plus the instants at which
// the busy node-seconds reach each quantile in `quantiles` (returned as indices in `at_quantile`).
std::vector<Seconds> occupancy_instants(const SimResult& result, Seconds t_min, Seconds t_max,
                                        size_t limit, const std::vector<double>& quantiles,
                                        std::vector<size_t>& at_quantile) {
  struct Sample {
    Seconds time;
    int busy;
  };
  std::vector<Sample> samples;
  for (const TimelineSample& s : result.timeline)
    if (s.time >= t_min && s.time < t_max) samples.push_back({s.time, s.busy_nodes});
  if (samples.empty())
    for (const JobRecord& j : result.jobs)
      for (auto [from, to] : held_intervals(j)) samples.push_back({from, j.nodes});
  std::sort(samples.begin(), samples.end(),
            [](const Sample& a, const Sample& b) { return a.time < b.time; });
  if (samples.empty()) return {};
  // Busy node-seconds up to each sample's successor: the state after sample i lasts until i + 1.
  std::vector<double> cumulative(samples.size());
  double total = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    Seconds next = i + 1 < samples.size() ? samples[i + 1].time : t_max;
    total += samples[i].busy * (next - samples[i].time);
    cumulative[i] = total;
  }
  std::vector<Seconds> picked;
  size_t stride = std::max<size_t>(1, (samples.size() + limit - 1) / std::max<size_t>(1, limit));
  for (size_t i = 0; i < samples.size(); i += stride) {
    size_t pick = i;
    for (size_t k = i; k < std::min(samples.size(), i + stride); ++k)
      if (samples[k].busy > samples[pick].busy) pick = k;
    picked.push_back(samples[pick].time);
  }
  std::vector<Seconds> quantile_times;
  for (double q : quantiles) {
    size_t i =
        std::lower_bound(cumulative.begin(), cumulative.end(), q * total) - cumulative.begin();
    quantile_times.push_back(samples[std::min(i, samples.size() - 1)].time);
  }
  picked.insert(picked.end(), quantile_times.begin(), quantile_times.end());
  std::sort(picked.begin(), picked.end());
  picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  at_quantile.clear();
  for (Seconds t : quantile_times)
    at_quantile.push_back(std::lower_bound(picked.begin(), picked.end(), t) - picked.begin());
  return picked;
}

json occupancy(const Torus& torus, const SimResult& result, Seconds t_min, Seconds t_max,
               const ReportLimits& limits) {
  const int x_extent = torus.extent(0);
  const int y_extent = torus.dims() > 1 ? torus.extent(1) : 1;
  const int nodes = torus.node_count();
  const int slices = nodes / (x_extent * y_extent);
  if (static_cast<size_t>(nodes) > limits.max_occupancy_nodes)
    return {{"instants", json::array()},
            {"omitted", "Occupancy maps are drawn for machines of up to " +
                            std::to_string(limits.max_occupancy_nodes) + " nodes; this one has " +
                            std::to_string(nodes) + "."}};
  json cells = json::array();
  for (NodeId id = 0; id < nodes; ++id) {
    Coords c = torus.coords(id);
    int slice = id / (x_extent * y_extent);  // z and any higher axes, folded
    cells.push_back({c[0] + slice * (x_extent + 1), torus.dims() > 1 ? c[1] : 0});
  }
  json out = {{"width", slices * (x_extent + 1) - 1},
              {"height", y_extent},
              {"slices", slices},
              {"slice_width", x_extent},
              {"cells", std::move(cells)}};
  bool recorded = std::any_of(result.jobs.begin(), result.jobs.end(),
                              [](const JobRecord& j) { return !j.runs.empty(); });
  std::vector<double> quantiles;
  for (int k = 1; k <= limits.occupancy_maps; ++k)
    quantiles.push_back(static_cast<double>(k) / (limits.occupancy_maps + 1));
  std::vector<size_t> at_quantile;
  size_t limit = std::max<size_t>(
      1, std::min(limits.max_occupancy_instants,
                  limits.max_occupancy_cells / static_cast<size_t>(std::max(1, nodes))));
  std::vector<Seconds> times =
      recorded ? occupancy_instants(result, t_min, t_max, limit, quantiles, at_quantile)
               : std::vector<Seconds>{};
  std::vector<std::vector<long>> holder(times.size(), std::vector<long>(nodes, -1));
  for (const JobRecord& j : result.jobs)
    for (auto [from, to] : held_intervals(j))
      for (auto it = std::lower_bound(times.begin(), times.end(), from);
           it != times.end() && *it < to; ++it)
        for (auto [first, last] : j.runs)
          std::fill(holder[it - times.begin()].begin() + first,
                    holder[it - times.begin()].begin() + last + 1, static_cast<long>(j.id));
  json instants = json::array();
  for (size_t i = 0; i < times.size(); ++i) {
    long busy = std::count_if(holder[i].begin(), holder[i].end(), [](long h) { return h >= 0; });
    instants.push_back({{"time", times[i]}, {"busy", busy}, {"jobs", holder[i]}});
  }
  out["instants"] = std::move(instants);
  out["maps"] = at_quantile;
  out["quantiles"] = quantiles;
  return out;
}

// The run-time model's per-job figures; null when no job has them (no model, or `trace`).
json network(const SimResult& result, const ReportLimits& limits) {
  std::vector<const JobRecord*> measured;
  for (const JobRecord& j : result.jobs)
    if (j.network()) measured.push_back(&j);
  if (measured.empty()) return nullptr;
  // The scatter keeps every k-th job so that a long trace stays a few hundred kilobytes; the
  // means by size and the histogram count every job, so nothing the sampling drops is lost.
  const size_t cap = std::max<size_t>(1, limits.max_network_points);
  const size_t stride = (measured.size() + cap - 1) / cap;
  json jobs = json::array();
  for (size_t i = 0; i < measured.size(); i += stride) {
    const NetworkCost& n = *measured[i]->network();
    jobs.push_back(
        {measured[i]->nodes, n.inflation, n.max_link_load, n.hop_bytes, measured[i]->id});
  }
  std::map<int, std::pair<double, long>> by_size;  // nodes -> (sum of inflation, jobs)
  double top_load = 0;
  for (const JobRecord* j : measured) {
    auto& [sum, count] = by_size[j->nodes];
    sum += j->network()->inflation;
    ++count;
    top_load = std::max(top_load, j->network()->max_link_load);
  }
  json sizes = json::array();
  for (const auto& [nodes, sum_count] : by_size)
    sizes.push_back({nodes, sum_count.first / sum_count.second, sum_count.second});
  // Equal bins from 0 to the largest load; with no load at all (single-node jobs) one bin [0, 1].
  const int bins = std::max(1, limits.link_load_bins);
  const double width = top_load > 0 ? top_load / bins : 1.0 / bins;
  std::vector<long> counts(bins, 0);
  for (const JobRecord* j : measured)
    ++counts[std::min(bins - 1, static_cast<int>(j->network()->max_link_load / width))];
  json edges = json::array();
  for (int b = 0; b <= bins; ++b) edges.push_back(b * width);
  return {{"measured", measured.size()},
          {"sampled", stride > 1},
          {"jobs", std::move(jobs)},
          {"by_size", std::move(sizes)},
          {"link_load", {{"edges", std::move(edges)}, {"counts", counts}}}};
}

}  // namespace

std::vector<std::pair<Seconds, Seconds>> held_intervals(const JobRecord& job) {
  auto intervals = job.running_intervals();
  if (!intervals.empty()) return {intervals.begin(), intervals.end()};
  return {{job.start, job.end}};
}

json run_report_data(const Machine& machine, const SimResult& result, const RunSummary& summary,
                     const json& about, const ReportLimits& limits) {
  json data;
  data["about"] = about;
  data["metrics"] = to_json(summary);
  data["nodes"] = machine.node_count();
  data["gantt"] = gantt(result, summary, machine.node_count(), limits);
  data["timeline"] = timeline(result, limits.max_timeline_points);
  data["slowdown"] = slowdown(result);
  if (json net = network(result, limits); !net.is_null()) data["network"] = std::move(net);
  if (const Torus* torus = machine.torus())
    data["occupancy"] = occupancy(*torus, result, summary.first_submit,
                                  std::max(summary.last_end, summary.first_submit), limits);
  return data;
}

}  // namespace trellis
