// Text and JSON output of gang simulations: the comparison table, the slot-by-slot trace of
// small runs ("which jobs ran in which slot"), and a JSON document with every number.
#pragma once

#include <ostream>
#include <vector>

#include "sim/gang/experiment.h"

namespace trellis::gangsim {

// One row per (policy, load): offered load, utilization (mean and spread over seeds), mean
// RETR, max TQLB (mean and spread), time-averaged max TQLB, size-RETR correlation, wall time.
void print_summary_table(std::ostream& out, const std::vector<GangSummary>& rows);

// The recorded slots. Up to 64 processors: one column per processor holding the job id
// (gang-switched jobs show on every processor of their partition, as in thesis Fig. 7.2);
// larger machines: one line per slot listing job@first+size.
void print_slot_trace(std::ostream& out, const GangSimResult& result);

// Jobs that were removed in the global stopped state, and counts of idle skips.
void print_global_state(std::ostream& out, const GangSimResult& result);

// Everything: runs with their metrics, per-job outcomes (when `with_jobs`), load series, trace.
void write_json(std::ostream& out, const std::vector<GangRun>& runs, bool with_jobs);

}  // namespace trellis::gangsim
