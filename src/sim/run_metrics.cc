#include "sim/run_metrics.h"

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

namespace trellis {

namespace {

// The time a job needed to run: its run time, or its limit when it was killed there. Not
// end - start, which for a time-shared job also counts the slots it was switched out.
Seconds time_ran(const JobRecord& j) {
  return j.timed_out ? j.time_limit : j.run_time;
}

nlohmann::json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

RunSummary summarize(const SimResult& r, const SummaryOptions& options) {
  RunSummary s;
  s.options = options;
  s.rejected = static_cast<long>(r.rejected.size());
  s.largest_free_box_sampled = r.largest_free_box_sampled;
  s.passes = r.passes;
  s.allocator_calls = r.allocator_calls;
  s.allocator_call_us = r.allocator_calls ? 1e6 * r.allocator_seconds / r.allocator_calls : 0;
  s.mean_pass_us = r.passes ? 1e6 * r.pass_seconds / r.passes : 0;
  s.max_pass_us = 1e6 * r.max_pass_seconds;
  s.wall_seconds = r.wall_seconds;
  s.jobs_per_second = r.wall_seconds > 0 ? static_cast<double>(r.jobs.size()) / r.wall_seconds : 0;

  const Seconds from = options.from.value_or(-std::numeric_limits<Seconds>::infinity());
  const Seconds to = options.to.value_or(std::numeric_limits<Seconds>::infinity());
  std::vector<const JobRecord*> counted;
  for (const JobRecord& j : r.jobs)
    if (j.submit >= from && j.submit < to) counted.push_back(&j);
  s.jobs = static_cast<long>(counted.size());
  if (counted.empty()) return s;

  const double n = r.machine_nodes;
  s.first_submit = std::numeric_limits<double>::infinity();
  double node_seconds = 0, demanded = 0, hops = 0, switches = 0;
  double core_seconds = 0, asked_core_seconds = 0, memory_seconds = 0, gpu_seconds = 0;
  double unrequested_node_seconds = 0, inflation = 0, hop_bytes = 0, link_load = 0;
  Seconds last_submit = 0;
  long multi = 0, tree_jobs = 0, measured = 0;
  bool recorded = false;
  std::vector<Seconds> submits;
  submits.reserve(counted.size());
  std::map<int, UserSummary> users;
  for (const JobRecord* job : counted) {
    const JobRecord& j = *job;
    s.first_submit = std::min(s.first_submit, j.submit);
    s.last_end = std::max(s.last_end, j.end);
    last_submit = std::max(last_submit, j.submit);
    s.timed_out += j.timed_out;
    s.mean_wait += j.wait();
    s.max_wait = std::max(s.max_wait, j.wait());
    s.mean_response += j.response();
    double bsld = j.bounded_slowdown(options.bsld_threshold);
    s.mean_bounded_slowdown += bsld;
    s.max_bounded_slowdown = std::max(s.max_bounded_slowdown, bsld);
    const Seconds held = j.held_seconds();
    node_seconds += j.nodes * held;
    core_seconds += static_cast<double>(j.cores) * held;
    asked_core_seconds += static_cast<double>(j.asked_cores) * held;
    memory_seconds += static_cast<double>(j.memory_mb) * held;
    gpu_seconds += static_cast<double>(j.gpus) * held;
    unrequested_node_seconds += std::max(0, j.nodes - j.requested_nodes) * held;
    demanded += j.requested_nodes * time_ran(j);
    recorded |= !j.runs.empty();
    if (j.nodes > 1 && !j.runs.empty()) hops += j.average_hops, ++multi;
    if (j.leaf_switches) switches += *j.leaf_switches, ++tree_jobs;
    if (const NetworkCost* network = j.network()) {
      inflation += network->inflation;
      hop_bytes += network->hop_bytes;
      link_load += network->max_link_load;
      ++measured;
    }
    submits.push_back(j.submit);
    UserSummary& u = users[j.user];
    u.user = j.user;
    ++u.jobs;
    u.node_seconds += j.nodes * held;
    u.mean_wait += j.wait();
    u.mean_bounded_slowdown += bsld;
  }
  double count = static_cast<double>(counted.size());
  s.mean_wait /= count;
  s.mean_response /= count;
  s.mean_bounded_slowdown /= count;
  if (recorded) s.mean_pairwise_hops = multi ? hops / multi : 0;
  if (tree_jobs) s.mean_leaf_switches = switches / tree_jobs;
  if (measured) {
    s.mean_inflation = inflation / measured;
    s.mean_hop_bytes = hop_bytes / measured;
    s.mean_max_link_load = link_load / measured;
  }
  if (node_seconds > 0) s.internal_fragmentation = unrequested_node_seconds / node_seconds;
  for (auto& [id, u] : users) {
    u.mean_wait /= u.jobs;
    u.mean_bounded_slowdown /= u.jobs;
    s.users.push_back(u);
  }
  std::stable_sort(s.users.begin(), s.users.end(), [](const UserSummary& a, const UserSummary& b) {
    return a.node_seconds > b.node_seconds;
  });
  s.makespan = s.last_end - s.first_submit;
  if (last_submit > s.first_submit)
    s.offered_load = demanded / (n * (last_submit - s.first_submit));

  // Time-based metrics integrate over [t0, t1]: the run, within the window when one is given.
  const Seconds t0 = std::max(s.first_submit, from), t1 = std::min(s.last_end, to);
  const Seconds span = t1 - t0;
  if (!(span > 0)) return s;
  std::sort(submits.begin(), submits.end());
  s.steady_from = submits[submits.size() / 10];
  s.steady_to = submits[submits.size() * 9 / 10];
  double busy = 0, steady_busy = 0, idle_waiting = 0, fragmented = 0, queue_area = 0, box_area = 0;
  double shared_fragmented = 0;
  bool has_shared = !r.timeline.empty();
  bool has_box = !r.timeline.empty();
  const auto& tl = r.timeline;
  for (size_t i = 0; i < tl.size(); ++i) {
    Seconds a = std::max(tl[i].time, t0);
    Seconds b = std::min(i + 1 < tl.size() ? tl[i + 1].time : s.last_end, t1);
    has_box &= tl[i].largest_free_box >= 0;
    has_shared &= tl[i].fragmentation >= 0;
    if (!(b > a)) continue;
    Seconds dt = b - a;
    busy += tl[i].busy_nodes * dt;
    if (tl[i].queued_jobs > 0) idle_waiting += (n - tl[i].busy_nodes) * dt;
    if (tl[i].head_blocked_by_shape) fragmented += dt;
    queue_area += tl[i].queued_jobs * dt;
    box_area += tl[i].largest_free_box * dt;
    shared_fragmented += tl[i].fragmentation * dt;
    s.max_queue_length = std::max(s.max_queue_length, tl[i].queued_jobs);
    Seconds sa = std::max(a, s.steady_from), sb = std::min(b, s.steady_to);
    if (sb > sa) steady_busy += tl[i].busy_nodes * (sb - sa);
  }
  // Without a window every node-second held lies in [T0, T1]; with one, the timeline's busy
  // nodes give the part inside it.
  s.utilization = (options.from || options.to ? busy : node_seconds) / (n * span);
  s.loss_of_capacity = idle_waiting / (n * span);
  s.fragmented_fraction = fragmented / span;
  s.mean_queue_length = queue_area / span;
  if (has_box) s.mean_largest_free_box = box_area / span;
  if (has_shared) s.shared_fragmentation = shared_fragmented / span;
  if (r.machine_cores > 0) {
    s.core_utilization = asked_core_seconds / (r.machine_cores * span);
    s.allocated_core_utilization = core_seconds / (r.machine_cores * span);
  }
  if (r.machine_memory_mb > 0)
    s.memory_utilization = memory_seconds / (static_cast<double>(r.machine_memory_mb) * span);
  if (r.machine_gpus > 0) s.gpu_utilization = gpu_seconds / (r.machine_gpus * span);
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
      {"bounded_slowdown_threshold_s", s.options.bsld_threshold},
      {"offered_load", s.offered_load},
      {"utilization", s.utilization},
      {"steady_utilization", s.steady_utilization},
      {"steady_window_s", {s.steady_from, s.steady_to}},
      {"window_s", {optional_number(s.options.from), optional_number(s.options.to)}},
      {"first_submit_s", s.first_submit},
      {"last_end_s", s.last_end},
      {"makespan_s", s.makespan},
      {"loss_of_capacity", s.loss_of_capacity},
      {"fragmented_time_fraction", s.fragmented_fraction},
      {"mean_queue_length", s.mean_queue_length},
      {"max_queue_length", s.max_queue_length},
      {"mean_largest_free_box", optional_number(s.mean_largest_free_box)},
      {"core_utilization", optional_number(s.core_utilization)},
      {"allocated_core_utilization", optional_number(s.allocated_core_utilization)},
      {"memory_utilization", optional_number(s.memory_utilization)},
      {"gpu_utilization", optional_number(s.gpu_utilization)},
      {"shared_fragmentation", optional_number(s.shared_fragmentation)},
      {"largest_free_box_sampled", s.largest_free_box_sampled},
      {"mean_pairwise_hops", optional_number(s.mean_pairwise_hops)},
      {"mean_leaf_switches", optional_number(s.mean_leaf_switches)},
      {"mean_inflation", optional_number(s.mean_inflation)},
      {"mean_hop_bytes", optional_number(s.mean_hop_bytes)},
      {"mean_max_link_load", optional_number(s.mean_max_link_load)},
      {"internal_fragmentation", s.internal_fragmentation},
      {"allocator_calls", s.allocator_calls},
      {"allocator_call_us", s.allocator_call_us},
      {"policy_passes", s.passes},
      {"mean_pass_us", s.mean_pass_us},
      {"max_pass_us", s.max_pass_us},
      {"wall_s", s.wall_seconds},
      {"jobs_per_s", s.jobs_per_second},
  };
}

nlohmann::json users_to_json(const RunSummary& s) {
  nlohmann::json users = nlohmann::json::array();
  for (const UserSummary& u : s.users)
    users.push_back({{"user", u.user >= 0 ? nlohmann::json(u.user) : nlohmann::json(nullptr)},
                     {"jobs", u.jobs},
                     {"node_seconds", u.node_seconds},
                     {"mean_wait_s", u.mean_wait},
                     {"mean_bounded_slowdown", u.mean_bounded_slowdown}});
  return users;
}

}  // namespace trellis
