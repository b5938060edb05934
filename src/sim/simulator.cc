#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <queue>
#include <stdexcept>

#include "alloc/locality_metrics.h"
#include "alloc/metrics.h"
#include "sched/batch_core.h"

namespace trellis {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Forwards to an allocator and measures each call: the "decision time per allocation" metric.
class TimedAllocator : public Allocator {
 public:
  TimedAllocator(const Machine& machine, const Allocator& inner)
      : Allocator(machine), inner_(inner) {}
  std::string_view name() const override { return inner_.name(); }
  Status check(const Request& request) const override { return inner_.check(request); }
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override {
    auto start = Clock::now();
    auto result = inner_.allocate(free, request);
    seconds_ += seconds_since(start);
    ++calls_;
    return result;
  }
  long calls() const { return calls_; }
  double seconds() const { return seconds_; }

 private:
  const Allocator& inner_;
  mutable long calls_ = 0;
  mutable double seconds_ = 0;
};

struct Ending {
  Seconds time;
  size_t record;  // index in SimResult::jobs
  bool operator>(const Ending& o) const {
    return time != o.time ? time > o.time : record > o.record;
  }
};

}  // namespace

RejectedJob rejected_job(const Job& job, std::string reason) {
  return {job.id,         std::move(reason), job.submit, job.run_time,
          job.time_limit, job.request.nodes, job.user};
}

double JobRecord::bounded_slowdown(Seconds threshold) const {
  Seconds ran = end - start;
  return std::max(1.0, response() / std::max(ran, threshold));
}

SimResult simulate(const Machine& machine, const Allocator& allocator, const QueuePolicy& policy,
                   const std::vector<Job>& input, const SimOptions& options) {
  auto wall_start = Clock::now();
  SimResult result;
  const int n = machine.node_count();
  result.machine_nodes = n;
  TimedAllocator timed(machine, allocator);
  auto core_owner = std::make_unique<BatchCore>(machine, timed, policy);
  BatchCore* core = core_owner.get();

  std::vector<const Job*> arrivals;
  arrivals.reserve(input.size());
  for (const Job& job : input) arrivals.push_back(&job);
  std::stable_sort(arrivals.begin(), arrivals.end(), [](const Job* a, const Job* b) {
    return a->submit != b->submit ? a->submit < b->submit : a->id < b->id;
  });
  result.jobs.reserve(arrivals.size());

  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> endings;
  constexpr Seconds kNever = std::numeric_limits<Seconds>::infinity();
  Seconds wake = kNever;
  size_t next_arrival = 0;
  size_t finished = 0;
  // The largest free box costs a scan of the machine. Up to kExactBoxNodes nodes it is measured
  // after every pass; on larger machines at most about kBoxSamples times over the arrivals' span,
  // each measurement standing until the next (a 16M-node torus would spend minutes otherwise).
  constexpr int kExactBoxNodes = 1 << 16;
  constexpr double kBoxSamples = 1000;
  Seconds box_interval = 0, next_box_measurement = -kNever;
  if (n > kExactBoxNodes && !arrivals.empty())
    box_interval = (arrivals.back()->submit - arrivals.front()->submit) / kBoxSamples;
  result.largest_free_box_sampled = box_interval > 0;
  int last_box = 0;
  long events = 0;

  while (next_arrival < arrivals.size() || !endings.empty() ||
         (wake < kNever && !core->queue().empty())) {
    Seconds now = kNever;
    if (next_arrival < arrivals.size()) now = arrivals[next_arrival]->submit;
    if (!endings.empty()) now = std::min(now, endings.top().time);
    if (!core->queue().empty()) now = std::min(now, wake);

    bool changed = now == wake;  // a promised start is due
    while (!endings.empty() && endings.top().time <= now) {
      const JobRecord& done = result.jobs[endings.top().record];
      endings.pop();
      (void)core->ended(done.id, done.end);  // it is running: the record was made at its start
      ++finished;
      changed = true;
    }
    while (next_arrival < arrivals.size() && arrivals[next_arrival]->submit <= now) {
      const Job& job = *arrivals[next_arrival++];
      if (auto ok = core->submit(job, now); !ok)
        result.rejected.push_back(rejected_job(job, ok.error().message));
      else
        changed = true;
    }
    if (!changed) continue;  // only jobs that can never run arrived: nothing to decide

    auto pass_start = Clock::now();
    PassResult decided = core->pass(now);
    double pass_time = seconds_since(pass_start);
    result.pass_seconds += pass_time;
    result.max_pass_seconds = std::max(result.max_pass_seconds, pass_time);
    ++result.passes;
    if (options.on_pass) options.on_pass(decided, *core);
    if (result.passes == options.restart_after_pass) {
      auto restarted = std::make_unique<BatchCore>(machine, timed, policy);
      if (auto ok = restarted->restore(core->snapshot()); !ok)
        throw std::logic_error("restoring the core's own snapshot failed: " + ok.error().message);
      core_owner = std::move(restarted);
      core = core_owner.get();
    }

    for (CoreDecision& d : decided.decisions) {
      const Job& job = *core->find(d.job);
      JobRecord record;
      record.id = job.id;
      record.submit = job.submit;
      record.start = now;
      record.run_time = job.run_time;
      record.time_limit = job.time_limit;
      record.nodes = job.request.nodes;
      record.requested_nodes = job.request.nodes;
      record.user = job.user;
      record.box = d.box;
      record.timed_out = options.kill_at_time_limit && job.run_time > job.time_limit;
      record.end = now + (record.timed_out ? job.time_limit : job.run_time);
      if (options.record_placements) {
        record.runs = d.nodes.runs();
        record.average_hops = average_pairwise_hops(machine, d.nodes);
        if (const FatTree* tree = machine.fat_tree())
          record.leaf_switches = leaf_switches_spanned(*tree, d.nodes);
      }
      endings.push({record.end, result.jobs.size()});
      result.jobs.push_back(std::move(record));
    }
    wake = core->next_wakeup().value_or(kNever);

    const auto& queue = core->queue();
    const NodeSet& free = core->free();
    TimelineSample sample{now, n - free.count(), static_cast<int>(queue.size()), false, -1};
    if (options.record_placements && machine.torus()) {
      if (now >= next_box_measurement) {
        auto box = largest_free_box(*machine.torus(), free);
        last_box = box ? static_cast<int>(box->volume()) : 0;
        next_box_measurement = now + box_interval;
      }
      sample.largest_free_box = last_box;
    }
    if (!queue.empty() && queue.front()->request.nodes <= free.count())
      sample.head_blocked_by_shape = !allocator.allocate(free, queue.front()->request).ok();
    if (!result.timeline.empty() && result.timeline.back().time == now)
      result.timeline.back() = sample;
    else
      result.timeline.push_back(sample);

    if (options.progress && (++events & 4095) == 0)
      options.progress(static_cast<double>(finished) / static_cast<double>(arrivals.size()));
    if (!queue.empty() && core->running().empty() && decided.decisions.empty() && wake == kNever &&
        next_arrival == arrivals.size()) {
      // Nothing runs, nothing will arrive and the policy starts nothing: the rest can never run.
      std::vector<JobId> stuck;
      for (const Job* job : queue) {
        result.rejected.push_back(
            rejected_job(*job, "the policy never started it on an empty machine"));
        stuck.push_back(job->id);
      }
      for (JobId id : stuck) (void)core->cancel(id, now);
    }
  }
  if (options.progress) options.progress(1.0);
  result.allocator_calls = timed.calls();
  result.allocator_seconds = timed.seconds();
  result.wall_seconds = seconds_since(wall_start);
  return result;
}

}  // namespace trellis
