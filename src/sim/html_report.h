// Self-contained HTML reports: one file with Apache ECharts, the data and the drawing script
// inlined, so it opens offline in any browser.
//
// The run report: a summary table (names, units, definitions), an interactive Gantt chart (time in
// a unit that suits the run, or dates when about.unix_start_time is given, x nodes in allocator
// order, zoomable), utilization and queue length over time, a histogram of bounded slowdown by
// job size and, on a mesh/torus, occupancy maps at busy-time quantiles plus one with a slider over
// the recorded instants. The comparison report tabulates and charts the runs of
// `trellis sim-compare`, linking each to its report, with mean and min..max over seeds and curves
// against load when the grid has them.
//
// Each page records in the DOM how many charts it drew (body attribute data-charts-rendered, and
// data-charts-expected), any script error (data-errors) and how far it overflows the window
// horizontally (data-page-overflow, pixels), so a headless browser can check it. The Gantt chart's
// element also records its x-axis range (data-x-min-s, data-x-max-s, trace seconds) and the
// node-seconds it drew (data-busy-node-seconds) and its time unit (data-time-unit: s, minutes,
// hours, days, or date); each occupancy map its data-busy-cells,
// data-free-cells and data-nodes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace trellis {

// `text` safe as HTML element content or a quoted attribute value: & < > " and ' become
// character references (&amp; &lt; &gt; &quot; &#39;); everything else is kept.
std::string html_escape(std::string_view text);

// `data` as built by run_report_data (sim/report_data.h).
std::string render_run_report(const nlohmann::json& data);

// `data`: {"title": ..., "about": {...}, "runs": [{"label", "allocator", "policy", "load", "seed",
// "dir", "metrics", and optionally "report", "completed_jobs", "common_metrics"}, ...]}, optionally
// with "job_sets_differ" and "common_jobs".
std::string render_comparison_report(const nlohmann::json& data);

}  // namespace trellis
