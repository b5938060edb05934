#include "sim/gang/sim_result_bridge.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "alloc/locality_metrics.h"
#include "alloc/metrics.h"

namespace trellis::gangsim {

QuantizedWorkload quantize(const std::vector<Job>& jobs, int processors, double quantum) {
  QuantizedWorkload out;
  for (const Job& j : jobs) {
    double ran = j.time_limit > 0 ? std::min(j.run_time, j.time_limit) : j.run_time;
    if (j.request.nodes < 1 || j.request.nodes > processors) {
      out.rejected.push_back(rejected_job(j, "needs " + std::to_string(j.request.nodes) +
                                                 " nodes; the machine has " +
                                                 std::to_string(processors)));
      continue;
    }
    if (!(ran > 0)) {
      out.rejected.push_back(rejected_job(j, "no run time"));
      continue;
    }
    SimJob s;
    s.id = j.id;
    s.submit = static_cast<long>(std::ceil(j.submit / quantum));
    s.size = j.request.nodes;
    s.work = std::max(1L, static_cast<long>(std::ceil(ran / quantum)));
    out.jobs.push_back(s);
  }
  std::stable_sort(out.jobs.begin(), out.jobs.end(),
                   [](const SimJob& a, const SimJob& b) { return a.submit < b.submit; });
  return out;
}

namespace {

std::vector<std::pair<NodeId, NodeId>> runs_of(const NodeSet& nodes) {
  std::vector<std::pair<NodeId, NodeId>> runs;
  for (NodeId id = nodes.next(0); id >= 0;) {
    NodeId end = nodes.next_absent(id);
    runs.emplace_back(id, end - 1);
    id = end >= nodes.size() ? -1 : nodes.next(end);
  }
  return runs;
}

// The spans `outcome` was switched in, in seconds within [start, end); empty when it ran from start
// to end without a break. Spans past the simulator's record cap become one interval up to `end`.
std::vector<std::pair<Seconds, Seconds>> running_intervals(const JobOutcome& outcome, Seconds start,
                                                           Seconds end, double quantum) {
  std::vector<std::pair<Seconds, Seconds>> intervals;
  for (auto [from, to] : outcome.active_spans) {
    Seconds a = std::max(start, static_cast<double>(from) * quantum);
    Seconds b = std::min(end, static_cast<double>(to) * quantum);
    if (b > a) intervals.emplace_back(a, b);
  }
  if (!outcome.spans_complete) {
    Seconds tail = intervals.empty() ? start : intervals.back().second;
    if (end > tail) intervals.emplace_back(tail, end);
  }
  if (intervals.size() == 1 && intervals[0].first == start && intervals[0].second == end)
    intervals.clear();
  return intervals;
}

}  // namespace

SimResult to_sim_result(const Machine& machine, const Curve& order, const GangSimResult& gang,
                        const std::vector<Job>& jobs, const QuantizedWorkload& quantized,
                        double quantum, bool record_placements) {
  SimResult result;
  result.machine_nodes = machine.node_count();
  result.passes = gang.slots;
  result.rejected = quantized.rejected;
  std::unordered_map<JobId, const Job*> by_id;
  for (const Job& j : jobs) by_id[j.id] = &j;
  std::vector<const JobOutcome*> started;
  for (const JobOutcome& o : gang.jobs)
    if (o.start >= 0 && o.end >= 0) started.push_back(&o);
  std::stable_sort(started.begin(), started.end(),
                   [](const JobOutcome* a, const JobOutcome* b) { return a->start < b->start; });
  for (const JobOutcome* o : started) {
    const Job& job = *by_id.at(o->id);
    JobRecord r;
    r.id = o->id;
    r.submit = job.submit;
    r.start = std::max(job.submit, static_cast<double>(o->start) * quantum);
    r.end = std::max(r.start, static_cast<double>(o->end) * quantum);
    r.run_time = job.run_time;
    r.time_limit = job.time_limit;
    r.nodes = o->partition;
    r.requested_nodes = job.request.nodes;
    r.user = job.user;
    r.timed_out = job.time_limit > 0 && job.run_time > job.time_limit;  // quantize() cuts there
    r.running_intervals = running_intervals(*o, r.start, r.end, quantum);
    if (record_placements) {
      NodeSet nodes(machine.node_count());
      for (int p = o->first; p < o->first + o->partition; ++p) nodes.set(order.node_at(p));
      r.runs = runs_of(nodes);
      r.average_hops = average_pairwise_hops(machine, nodes);
      if (const FatTree* tree = machine.fat_tree())
        r.leaf_switches = leaf_switches_spanned(*tree, nodes);
    }
    result.jobs.push_back(std::move(r));
  }
  for (const ActivitySample& a : gang.activity) {
    TimelineSample t;
    t.time = static_cast<double>(a.time) * quantum;
    t.busy_nodes = a.active_processors;
    t.queued_jobs = a.jobs_in_system - a.running_jobs;
    result.timeline.push_back(t);
  }
  return result;
}

void set_time_shared_utilization(RunSummary& summary, const GangSimResult& gang, double quantum,
                                 int processors) {
  if (summary.makespan <= 0) return;
  // Nothing runs before the first submit or after the last end, so the active processor-time
  // over [0, duration) is the active processor-time over the summary's window.
  double active_seconds =
      gang.utilization * processors * static_cast<double>(gang.duration) * quantum;
  summary.utilization = active_seconds / (processors * summary.makespan);
}

}  // namespace trellis::gangsim
