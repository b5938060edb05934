// The data behind a run's HTML report, as one JSON document the page's script draws from:
//   gantt       rectangles [start, end, first node, last node + 1, job id, nodes, wait], one per
//               run of consecutive node ids of a job (node ids are the allocator's order); when a
//               run has more than max_rectangles of them, the jobs with the most node-seconds are
//               kept and the page says how many were left out
//   timeline    busy nodes, queued jobs and the largest free box (mesh/torus) after each instant
//   (evenly thinned to at most
//               max_timeline_points, always keeping the last)
//   slowdown    job counts by size class (powers of two) and bounded-slowdown bin
//   occupancy   mesh/torus only: which job holds each node at a few instants, laid out as a grid
//               (x across, y down; the z slices of a 3-D machine side by side; higher axes folded
//               into z)
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "sim/run_metrics.h"
#include "sim/simulator.h"
#include "topology/machine.h"

namespace trellis {

struct ReportLimits {
  size_t max_rectangles = 40000;
  size_t max_timeline_points = 4000;
  int occupancy_instants = 4;  // at equal fractions of the run: 1/5, 2/5, ... for 4
};

nlohmann::json run_report_data(const Machine& machine, const SimResult& result,
                               const RunSummary& summary, const nlohmann::json& about,
                               const ReportLimits& limits = {});

}  // namespace trellis
