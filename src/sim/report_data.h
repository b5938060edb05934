// The data behind a run's HTML report, as one JSON document the page's script draws from:
//   gantt       the run's busy node-time over [first submit, last end] (t_min, t_max). With few
//               enough rectangles, every job is drawn: one rectangle
//               [from, to, first node, last node + 1, job id, nodes, wait, timed out] per run of
//               consecutive node ids (allocator order) and per interval the job ran (a gang job
//               runs in several). With more, the jobs with the most node-seconds whose intervals
//               are long enough to see stay rectangles and the rest are summed into bands
//               [from, to, first node, last node + 1, busy fraction] over a grid of time bins x
//               node rows, so the rectangles and bands together hold every busy node-second
//               (busy_node_seconds) exactly.
//   timeline    busy nodes, queued jobs and the largest free box (mesh/torus) after each instant
//               (thinned to at most max_timeline_points: the first, busiest and last sample of
//               each of max_timeline_points / 3 equal stretches of time)
//   slowdown    job counts by size class (powers of two) and bounded-slowdown bin
//   occupancy   mesh/torus of up to max_occupancy_nodes only: the grid cell of every node (x
//   across, y down; the z slices of a
//               3-D machine side by side; higher axes folded into z) and, at up to a few hundred of
//               the run's instants, the job holding each node (-1: free); `maps` names the instants
//               at quantiles of busy node-seconds, where the machine is doing the run's work
//   network     only when jobs have a run-time model's figures (JobRecord::network()): `jobs`
//               [nodes, inflation, max link load, hop-bytes, job id] of at most max_network_points
//               of them (every k-th in start order when there are more; `sampled`, `measured` the
//               number with figures), `by_size` [nodes, mean inflation, jobs] over every measured
//               job of each size, and `link_load` a histogram of every measured job's max link
//               load: `edges` (link_load_bins + 1 of them, from 0) and `counts`
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "sim/run_metrics.h"
#include "sim/simulator.h"
#include "topology/machine.h"

namespace trellis {

struct ReportLimits {
  size_t max_rectangles = 20000;  // beyond this, short jobs are summed into bands
  int gantt_time_bins = 400;      // the bands' grid
  int gantt_node_rows = 128;
  size_t max_timeline_points = 4000;
  int occupancy_maps = 4;               // at busy-time quantiles 1/5, 2/5, ... for 4
  size_t max_occupancy_instants = 300;  // for the slider
  size_t max_occupancy_cells = 300000;  // instants x nodes
  size_t max_occupancy_nodes = 65536;   // larger machines get no map (one cell per node)
  size_t max_network_points = 4000;     // jobs in the inflation scatter
  int link_load_bins = 20;
};

// The intervals `job` held its nodes: running_intervals, or [start, end) when it ran unbroken.
std::vector<std::pair<Seconds, Seconds>> held_intervals(const JobRecord& job);

nlohmann::json run_report_data(const Machine& machine, const SimResult& result,
                               const RunSummary& summary, const nlohmann::json& about,
                               const ReportLimits& limits = {});

}  // namespace trellis
