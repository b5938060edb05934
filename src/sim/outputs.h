// Plain outputs of a simulated run: the per-job CSV and the summary JSON.
//
// jobs.csv columns: id, submit, start, end, wait, response, bounded_slowdown, state (CD or TO),
// nodes, average_hops, leaf_switches (empty off fat trees), hostlist (Slurm-style, "n[0-3,12]").
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "sim/run_metrics.h"
#include "sim/simulator.h"

namespace trellis {

// Needs the placements recorded (SimOptions::record_placements) for the last three columns.
void write_jobs_csv(std::ostream& out, const SimResult& result);

// The summary JSON document: `about` (machine, workload, policy, allocator, ...) plus the metrics
// and the rejected jobs.
nlohmann::json summary_document(const nlohmann::json& about, const RunSummary& summary,
                                const SimResult& result);

// Writes `text` to `path`; an error names the path.
Status write_text_file(const std::string& path, const std::string& text);

}  // namespace trellis
