// Self-contained HTML reports: one file with Apache ECharts, the data and the drawing script
// inlined, so it opens offline in any browser.
//
// The run report draws an interactive Gantt chart (time x nodes in allocator order, zoomable on
// both axes), utilization and queue length over time, a histogram of bounded slowdown by job size
// and, on a mesh/torus, occupancy maps at a few instants. The comparison report tabulates and
// charts the runs of `trellis sim-compare`.
//
// Each page records in the DOM how many charts it drew (body attribute data-charts-rendered, and
// data-charts-expected) and any script error (data-errors), so a headless browser can check it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trellis {

// `data` as built by run_report_data (sim/report_data.h).
std::string render_run_report(const nlohmann::json& data);

// `data`: {"title": ..., "about": {...}, "runs": [{"label": ..., "metrics": {...}}, ...]}.
std::string render_comparison_report(const nlohmann::json& data);

}  // namespace trellis
