#include "sim/run_metrics.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace trellis {

RunSummary summarize(const SimResult& r) {
  RunSummary s;
  s.jobs = static_cast<long>(r.jobs.size());
  s.rejected = static_cast<long>(r.rejected.size());
  s.passes = r.passes;
  s.allocator_calls = r.allocator_calls;
  s.allocator_call_us = r.allocator_calls ? 1e6 * r.allocator_seconds / r.allocator_calls : 0;
  s.mean_pass_us = r.passes ? 1e6 * r.pass_seconds / r.passes : 0;
  s.max_pass_us = 1e6 * r.max_pass_seconds;
  s.wall_seconds = r.wall_seconds;
  s.jobs_per_second = r.wall_seconds > 0 ? s.jobs / r.wall_seconds : 0;
  if (r.jobs.empty()) return s;

  const double n = r.machine_nodes;
  s.first_submit = std::numeric_limits<double>::infinity();
  double node_seconds = 0, hops = 0, switches = 0;
  Seconds last_submit = 0;
  long multi = 0, tree_jobs = 0;
  std::vector<Seconds> submits;
  submits.reserve(r.jobs.size());
  for (const JobRecord& j : r.jobs) {
    s.first_submit = std::min(s.first_submit, j.submit);
    s.last_end = std::max(s.last_end, j.end);
    last_submit = std::max(last_submit, j.submit);
    s.timed_out += j.timed_out;
    s.mean_wait += j.wait();
    s.max_wait = std::max(s.max_wait, j.wait());
    s.mean_response += j.response();
    double bsld = j.bounded_slowdown();
    s.mean_bounded_slowdown += bsld;
    s.max_bounded_slowdown = std::max(s.max_bounded_slowdown, bsld);
    node_seconds += j.nodes * (j.end - j.start);
    if (j.nodes > 1 && !j.runs.empty()) hops += j.average_hops, ++multi;
    if (j.leaf_switches) switches += *j.leaf_switches, ++tree_jobs;
    submits.push_back(j.submit);
  }
  double count = static_cast<double>(r.jobs.size());
  s.mean_wait /= count;
  s.mean_response /= count;
  s.mean_bounded_slowdown /= count;
  s.mean_pairwise_hops = multi ? hops / multi : 0;
  s.mean_leaf_switches = tree_jobs ? switches / tree_jobs : -1;
  s.makespan = s.last_end - s.first_submit;
  if (s.makespan <= 0) return s;
  s.utilization = node_seconds / (n * s.makespan);
  if (last_submit > s.first_submit)
    s.offered_load = node_seconds / (n * (last_submit - s.first_submit));

  std::sort(submits.begin(), submits.end());
  s.steady_from = submits[submits.size() / 10];
  s.steady_to = submits[submits.size() * 9 / 10];
  double steady_busy = 0, idle_waiting = 0, fragmented = 0, queue_area = 0, box_area = 0;
  bool has_box = !r.timeline.empty();
  const auto& tl = r.timeline;
  for (size_t i = 0; i < tl.size(); ++i) {
    Seconds from = tl[i].time;
    Seconds to = i + 1 < tl.size() ? tl[i + 1].time : s.last_end;
    Seconds dt = std::max(0.0, to - from);
    if (tl[i].queued_jobs > 0) idle_waiting += (n - tl[i].busy_nodes) * dt;
    if (tl[i].head_blocked_by_shape) fragmented += dt;
    queue_area += tl[i].queued_jobs * dt;
    box_area += tl[i].largest_free_box * dt;
    has_box &= tl[i].largest_free_box >= 0;
    s.max_queue_length = std::max(s.max_queue_length, tl[i].queued_jobs);
    Seconds a = std::max(from, s.steady_from), b = std::min(to, s.steady_to);
    if (b > a) steady_busy += tl[i].busy_nodes * (b - a);
  }
  s.loss_of_capacity = idle_waiting / (n * s.makespan);
  s.fragmented_fraction = fragmented / s.makespan;
  s.mean_queue_length = queue_area / s.makespan;
  s.mean_largest_free_box = has_box ? box_area / s.makespan : -1;
  if (s.steady_to > s.steady_from)
    s.steady_utilization = steady_busy / (n * (s.steady_to - s.steady_from));
  return s;
}

nlohmann::json to_json(const RunSummary& s) {
  return {
      {"jobs", s.jobs},
      {"rejected", s.rejected},
      {"timed_out", s.timed_out},
      {"mean_wait_s", s.mean_wait},
      {"max_wait_s", s.max_wait},
      {"mean_response_s", s.mean_response},
      {"mean_bounded_slowdown", s.mean_bounded_slowdown},
      {"max_bounded_slowdown", s.max_bounded_slowdown},
      {"offered_load", s.offered_load},
      {"utilization", s.utilization},
      {"steady_utilization", s.steady_utilization},
      {"steady_window_s", {s.steady_from, s.steady_to}},
      {"first_submit_s", s.first_submit},
      {"last_end_s", s.last_end},
      {"makespan_s", s.makespan},
      {"loss_of_capacity", s.loss_of_capacity},
      {"fragmented_time_fraction", s.fragmented_fraction},
      {"mean_queue_length", s.mean_queue_length},
      {"max_queue_length", s.max_queue_length},
      {"mean_largest_free_box", s.mean_largest_free_box},
      {"mean_pairwise_hops", s.mean_pairwise_hops},
      {"mean_leaf_switches", s.mean_leaf_switches},
      {"allocator_calls", s.allocator_calls},
      {"allocator_call_us", s.allocator_call_us},
      {"policy_passes", s.passes},
      {"mean_pass_us", s.mean_pass_us},
      {"max_pass_us", s.max_pass_us},
      {"wall_s", s.wall_seconds},
      {"jobs_per_s", s.jobs_per_second},
  };
}

}  // namespace trellis
