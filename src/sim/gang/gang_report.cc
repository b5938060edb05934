#include "sim/gang/gang_report.h"

#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <string>

namespace trellis::gangsim {

namespace {

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string_view fate_name(JobFate fate) {
  switch (fate) {
    case JobFate::kFinished:
      return "finished";
    case JobFate::kDeadlocked:
      return "deadlocked";
    case JobFate::kUnfinished:
      return "unfinished";
  }
  return "?";
}

}  // namespace

void print_summary_table(std::ostream& out, const std::vector<GangSummary>& rows) {
  out << std::left << std::setw(18) << "policy" << std::right << std::setw(6) << "load"
      << std::setw(6) << "runs" << std::setw(8) << "W_act" << std::setw(8) << "util"
      << std::setw(15) << "util range" << std::setw(9) << "RETR" << std::setw(8) << "maxTQLB"
      << std::setw(8) << "range" << std::setw(9) << "avg max" << std::setw(8) << "corr"
      << std::setw(8) << "wall s"
      << "\n";
  for (const GangSummary& r : rows) {
    out << std::left << std::setw(18) << r.policy << std::right << std::setw(6) << fixed(r.load, 3)
        << std::setw(6) << r.runs << std::setw(8) << fixed(r.offered_load, 3) << std::setw(8)
        << fixed(r.utilization, 3) << std::setw(15)
        << (fixed(r.utilization_min, 3) + "-" + fixed(r.utilization_max, 3)) << std::setw(9)
        << fixed(r.mean_retr, 2) << std::setw(8) << fixed(r.max_tqlb, 1) << std::setw(8)
        << (std::to_string(r.max_tqlb_min) + "-" + std::to_string(r.max_tqlb_max)) << std::setw(9)
        << fixed(r.mean_max_tqlb, 2) << std::setw(8) << fixed(r.correlation, 2) << std::setw(8)
        << fixed(r.wall_seconds, 2) << "\n";
  }
}

void print_slot_trace(std::ostream& out, const GangSimResult& result) {
  if (result.trace.empty()) return;
  out << "Slots (" << result.policy << ", " << result.processors << " processors):\n";
  if (result.processors <= 64) {
    out << std::setw(8) << "time";
    for (int p = 0; p < result.processors; ++p) {
      std::string label = "P";
      label += std::to_string(p);
      out << std::setw(5) << label;
    }
    out << "\n";
    for (const SlotRecord& slot : result.trace) {
      std::vector<std::string> cell(result.processors, ".");
      for (const auto& r : slot.running)
        for (int p = r.first; p < r.first + r.size && p < result.processors; ++p)
          cell[p] = std::to_string(r.job);
      out << std::setw(8) << slot.time;
      for (const auto& c : cell) out << std::setw(5) << c;
      out << "\n";
    }
    return;
  }
  for (const SlotRecord& slot : result.trace) {
    out << std::setw(8) << slot.time << " ";
    for (const auto& r : slot.running) out << " " << r.job << "@" << r.first << "+" << r.size;
    out << "\n";
  }
}

void print_global_state(std::ostream& out, const GangSimResult& result) {
  out << result.policy << ": " << result.finished() << " finished, " << result.deadlocked()
      << " removed as globally stopped (deadlocked), " << result.idle_skips
      << " idle skips; useful utilization " << fixed(result.useful_utilization, 3) << "\n";
  for (const JobOutcome& j : result.jobs)
    if (j.fate == JobFate::kDeadlocked)
      out << "  job " << j.id << " (" << j.size << " processors) deadlocked: removed at time "
          << j.end << " after " << j.done << " of " << j.work << " units of work\n";
}

void write_json(std::ostream& out, const std::vector<GangRun>& runs, bool with_jobs) {
  nlohmann::json doc = nlohmann::json::array();
  for (const GangRun& run : runs) {
    const GangSimResult& r = run.result;
    nlohmann::json j = {
        {"policy", run.policy},
        {"target_load", run.load},
        {"seed", run.seed},
        {"processors", r.processors},
        {"duration", r.duration},
        {"slots", r.slots},
        {"offered_load", r.offered_load},
        {"utilization", r.utilization},
        {"useful_utilization", r.useful_utilization},
        {"mean_retr", r.mean_retr},
        {"retr_log2size_correlation", r.retr_size_correlation},
        {"max_tqlb", r.max_tqlb},
        {"mean_max_tqlb", r.mean_max_tqlb},
        {"mean_min_tqlb", r.mean_min_tqlb},
        {"jobs_finished", r.finished()},
        {"jobs_deadlocked", r.deadlocked()},
        {"idle_skips", r.idle_skips},
        {"wall_seconds", run.wall_seconds},
    };
    nlohmann::json series = nlohmann::json::array();
    for (const LoadSample& s : r.load_series) series.push_back({s.time, s.load.max, s.load.min});
    j["tqlb_series"] = std::move(series);  // [time, max TQLB, min TQLB]
    if (with_jobs) {
      nlohmann::json jobs = nlohmann::json::array();
      for (const JobOutcome& o : r.jobs)
        jobs.push_back({{"id", o.id},
                        {"size", o.size},
                        {"submit", o.submit},
                        {"end", o.end},
                        {"work", o.work},
                        {"done", o.done},
                        {"retr", o.retr},
                        {"fate", fate_name(o.fate)}});
      j["jobs"] = std::move(jobs);
    }
    nlohmann::json trace = nlohmann::json::array();
    for (const SlotRecord& s : r.trace) {
      nlohmann::json running = nlohmann::json::array();
      for (const auto& x : s.running)
        running.push_back({{"job", x.job}, {"first", x.first}, {"size", x.size}});
      trace.push_back({{"time", s.time}, {"running", std::move(running)}});
    }
    j["slots_trace"] = std::move(trace);
    doc.push_back(std::move(j));
  }
  out << doc.dump(1) << "\n";
}

}  // namespace trellis::gangsim
