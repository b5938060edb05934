// Plain outputs of a simulated run: the per-job CSV and the summary JSON.
//
// jobs.csv: one row per job of the workload, the jobs run in order of start, then the rejected
// ones. Columns:
//   id, user               the job number and user id of the input (user empty when unknown)
//   submit, start, end     seconds on the workload's clock, written exactly (no rounding)
//   wait, response         start - submit, end - submit
//   run_time               the run time the input gives (the job ran min(run_time, requested_time)
//                          when killed at its limit)
//   requested_time         the time limit (the estimate backfilling uses)
//   requested_nodes, nodes what it asked for, what it held (a gang partition may be larger)
//   bounded_slowdown       max(1, response / max(ran, threshold)), threshold 10 s by default
//   state                  CD completed, TO killed at its time limit, RJ rejected (never run:
//                          start, end and the per-run columns are empty)
//   reason                 why it was rejected or killed
//   average_hops           mean hop distance over pairs of its nodes (empty when not recorded)
//   leaf_switches          leaf switches spanned (fat trees only)
//   box_shape, box_origin  the box it got ("4x2x2", "3 0 5"), when placed as a box
//   inflation              with a run-time model (sim/runtime_model.h): the factor its recorded
//                          run time was multiplied by on its placement (1: as compact as it gets)
//   hop_bytes              ... the all-to-all hop-bytes of its placement (MiB x hops, 1 MiB per
//                          ordered pair of nodes)
//   max_link_load          ... messages on the most loaded link of its own routes, per unit of
//                          link capacity (topology/link_load.h)
//   hostlist               its nodes, Slurm-style ("n[0-3,12]")
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/run_metrics.h"
#include "sim/simulator.h"

namespace trellis {

// Needs the placements recorded (SimOptions::record_placements) for the placement columns.
void write_jobs_csv(std::ostream& out, const SimResult& result,
                    Seconds bsld_threshold = JobRecord::kBoundedSlowdownThreshold);

// `text` as one CSV field: quoted (with quotes doubled) when it holds a comma, quote or newline.
std::string csv_field(std::string_view text);

// The fields of one CSV line, the inverse of csv_field: double quotes enclose fields that hold
// commas ("" inside them is one quote); a carriage return (a CRLF line end) is dropped. An empty
// line is one empty field.
std::vector<std::string> parse_csv_line(std::string_view line);

// The summary JSON document: `about` (machine, workload, policy, allocator, ...) plus "metrics"
// (run_metrics.h; null where not computed), "users" (per-user figures) and "rejected_jobs".
nlohmann::json summary_document(const nlohmann::json& about, const RunSummary& summary,
                                const SimResult& result);

// Writes `text` to `path`; an error names the path.
Status write_text_file(const std::string& path, const std::string& text);

}  // namespace trellis
