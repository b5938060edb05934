#include "sim/user_fairness.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace trellis {

double jain_index(const std::vector<double>& values) {
  double sum = 0, squares = 0;
  for (double v : values) {
    sum += v;
    squares += v * v;
  }
  if (values.empty() || squares == 0) return 1;
  return sum * sum / (static_cast<double>(values.size()) * squares);
}

UserFairness user_fairness(const SimResult& result, double bsld_threshold) {
  std::map<int, UserFigures> by_user;
  for (const JobRecord& job : result.jobs) {
    UserFigures& u = by_user[job.user];
    u.user = job.user;
    ++u.jobs;
    u.mean_wait += job.wait();
    u.mean_bounded_slowdown += job.bounded_slowdown(bsld_threshold);
    u.node_hours += job.nodes * job.held_seconds() / 3600;
  }
  UserFairness out;
  std::vector<double> slowdowns;
  for (auto& [id, u] : by_user) {
    u.mean_wait /= u.jobs;
    u.mean_bounded_slowdown /= u.jobs;
    slowdowns.push_back(u.mean_bounded_slowdown);
    out.users.push_back(u);
  }
  out.jain_bounded_slowdown = jain_index(slowdowns);
  return out;
}

FairStartFigures fair_start_unfairness(
    const Machine& machine, const Allocator& allocator, const QueuePolicy& policy,
    const std::vector<Job>& jobs, const SimOptions& options, const SimResult& result,
    const std::function<std::unique_ptr<QueueOrder>()>& make_order, size_t sample,
    const std::function<void(double)>& progress) {
  std::vector<const Job*> arrivals;
  for (const Job& job : jobs) arrivals.push_back(&job);
  std::stable_sort(arrivals.begin(), arrivals.end(), [](const Job* a, const Job* b) {
    return a->submit != b->submit ? a->submit < b->submit : a->id < b->id;
  });
  std::unordered_map<JobId, Seconds> started;
  for (const JobRecord& record : result.jobs) started[record.id] = record.start;
  const size_t n = arrivals.size();
  const size_t count = sample == 0 ? n : std::min(sample, n);
  FairStartFigures out;
  SimOptions replay = options;
  replay.record_placements = false;
  replay.progress = nullptr;
  replay.on_pass = nullptr;
  replay.restart_after_pass = -1;
  double delay = 0;
  int unfair = 0;
  std::vector<Job> prefix;
  for (size_t k = 0; k < count; ++k) {
    // Evenly spread over the trace, the last job included.
    const size_t index = count == n ? k : (k * (n - 1)) / std::max<size_t>(count - 1, 1);
    const Job& job = *arrivals[index];
    auto actual = started.find(job.id);
    if (actual == started.end()) continue;  // rejected
    prefix.clear();
    for (size_t i = 0; i <= index; ++i) prefix.push_back(*arrivals[i]);
    std::unique_ptr<QueueOrder> order = make_order ? make_order() : nullptr;
    replay.order = order.get();
    SimResult alone = simulate(machine, allocator, policy, prefix, replay);
    for (const JobRecord& record : alone.jobs)
      if (record.id == job.id) {
        const double late = actual->second - record.start;
        if (late > 1e-6) {
          delay += late;
          ++unfair;
        }
        ++out.jobs_measured;
        break;
      }
    if (progress) progress(static_cast<double>(k + 1) / static_cast<double>(count));
  }
  if (out.jobs_measured > 0) {
    out.mean_unfair_delay = delay / out.jobs_measured;
    out.unfair_fraction = static_cast<double>(unfair) / out.jobs_measured;
  }
  return out;
}

}  // namespace trellis
