#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <queue>
#include <span>

#include "alloc/locality_metrics.h"
#include "alloc/metrics.h"
#include "sched/batch_core.h"
#include "sim/event_loop.h"

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

// The job model of batch runs (see sim/event_loop.h): a started job holds its nodes for its run
// time, or until its time limit kills it. Records each job at its start and the system's state
// after each pass.
class BatchJobs {
 public:
  BatchJobs(const Machine& machine, const Allocator& allocator, const SimOptions& options,
            std::span<const Job* const> arrivals, SimResult& result)
      : machine_(machine), allocator_(allocator), options_(options), result_(result) {
    total_ = arrivals.size();
    // The largest free box costs a scan of the machine. Up to kExactBoxNodes nodes it is measured
    // after every pass; on larger machines at most about kBoxSamples times over the arrivals'
    // span, each measurement standing until the next (a 16M-node torus would spend minutes
    // otherwise).
    constexpr int kExactBoxNodes = 1 << 16;
    constexpr double kBoxSamples = 1000;
    if (machine.node_count() > kExactBoxNodes && !arrivals.empty())
      box_interval_ = (arrivals.back()->submit - arrivals.front()->submit) / kBoxSamples;
    result.largest_free_box_sampled = box_interval_ > 0;
  }

  bool arrivals_wait_for_wakeup() const { return false; }
  Seconds next_end() const { return endings_.empty() ? kNever : endings_.top().time; }
  bool stuck() const { return false; }
  void admitted(const Job&, Seconds) {}
  void rejected(const Job& job, const Error& why) {
    result_.rejected.push_back(rejected_job(job, why.message));
  }

  bool advance_to(Seconds now, BatchCore& core) {
    bool any = false;
    while (!endings_.empty() && endings_.top().time <= now) {
      const JobRecord& done = result_.jobs[endings_.top().record];
      endings_.pop();
      if (options_.runtime_model) options_.runtime_model->ended(done.id);
      (void)core.ended(done.id, done.end);  // it is running: the record was made at its start
      ++finished_;
      any = true;
    }
    return any;
  }

  void after_pass(const PassResult& decided, BatchCore& core, std::optional<Seconds> wake,
                  bool arrivals_left) {
    const Seconds now = decided.now;
    for (const CoreDecision& d : decided.decisions) record_start(*core.find(d.job), d, now);
    sample(core, now);
    if (options_.progress && (++passes_ & 4095) == 0)
      options_.progress(static_cast<double>(finished_) / static_cast<double>(total_));
    const auto& queue = core.queue();
    if (!queue.empty() && core.running().empty() && decided.decisions.empty() && !wake &&
        !arrivals_left) {
      // Nothing runs, nothing will arrive and the policy starts nothing: the rest can never run.
      std::vector<JobId> stuck;
      for (const Job* job : queue) {
        result_.rejected.push_back(
            rejected_job(*job, "the policy never started it on an empty machine"));
        stuck.push_back(job->id);
      }
      for (JobId id : stuck) (void)core.cancel(id, now);
    }
  }

 private:
  void record_start(const Job& job, const CoreDecision& d, Seconds now) {
    JobRecord record;
    record.id = job.id;
    record.submit = job.submit;
    record.start = now;
    record.run_time = job.run_time;
    record.time_limit = job.time_limit;
    record.nodes = job.request.nodes;
    record.requested_nodes = job.request.asked_nodes();
    record.user = job.user;
    for (const NodeGrant& grant : d.grants) {
      record.cores += static_cast<int64_t>(grant.cores.size());
      record.memory_mb += grant.memory_mb;
      record.gpus += static_cast<int64_t>(grant.gpus.size());
    }
    // The simulator's jobs run one task per node: what they asked is their cores per task.
    record.asked_cores = job.resources.cpus_per_task > 0
                             ? int64_t{job.resources.cpus_per_task} * job.request.nodes
                             : record.cores;
    if (d.box) record.set_box(*d.box);
    Seconds run_time = job.run_time;  // on this placement
    std::optional<double> hops;       // when the model measured them
    if (RuntimeModel* model = options_.runtime_model) {
      NetworkCost cost = model->started(job, d.nodes);
      run_time *= cost.inflation;
      if (model->measures()) record.set_network(cost), hops = cost.average_hops;
    }
    record.timed_out = options_.kill_at_time_limit && run_time > job.time_limit;
    record.end = now + (record.timed_out ? job.time_limit : run_time);
    if (options_.record_placements) {
      record.runs = d.nodes.runs();
      record.average_hops = hops ? *hops : average_pairwise_hops(machine_, d.nodes);
      if (const FatTree* tree = machine_.fat_tree())
        record.leaf_switches = leaf_switches_spanned(*tree, d.nodes);
    }
    endings_.push({record.end, result_.jobs.size()});
    result_.jobs.push_back(std::move(record));
  }

  // The system's state after the pass at `now` (one sample per instant).
  void sample(const BatchCore& core, Seconds now) {
    const auto& queue = core.queue();
    const NodeSet& free = core.free();
    const int n = machine_.node_count();
    TimelineSample sample{now, n - free.count(), static_cast<int>(queue.size()), false, -1};
    if (options_.record_placements && machine_.torus()) {
      if (now >= next_box_measurement_) {
        auto box = largest_free_box(*machine_.torus(), free);
        last_box_ = box ? static_cast<int>(box->volume()) : 0;
        next_box_measurement_ = now + box_interval_;
      }
      sample.largest_free_box = last_box_;
    }
    if (const NodePool* pool = core.pool()) {
      NodePool::Totals totals = pool->totals();
      sample.busy_cores = totals.cores - totals.free_cores;
      sample.fragmentation = totals.fragmentation;
      sample.busy_nodes = n - pool->idle_nodes().count();
    } else if (!queue.empty() && queue.front()->request.nodes <= free.count()) {
      sample.head_blocked_by_shape = !allocator_.allocate(free, queue.front()->request).ok();
    }
    if (!result_.timeline.empty() && result_.timeline.back().time == now)
      result_.timeline.back() = sample;
    else
      result_.timeline.push_back(sample);
  }

  const Machine& machine_;
  const Allocator& allocator_;  // not the timed one: shape checks are not the policy's calls
  const SimOptions& options_;
  SimResult& result_;
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> endings_;
  size_t total_ = 0;
  size_t finished_ = 0;
  long passes_ = 0;
  Seconds box_interval_ = 0, next_box_measurement_ = -kNever;
  int last_box_ = 0;
};

}  // namespace

RejectedJob rejected_job(const Job& job, std::string reason) {
  return {job.id,         std::move(reason),         job.submit, job.run_time,
          job.time_limit, job.request.asked_nodes(), job.user};
}

void JobRecord::set_box(const Box& box) {
  Uncommon changed = uncommon_ ? *uncommon_ : Uncommon{};
  changed.box = box;
  uncommon_ = std::make_shared<const Uncommon>(std::move(changed));
}

void JobRecord::set_network(const NetworkCost& cost) {
  Uncommon changed = uncommon_ ? *uncommon_ : Uncommon{};
  changed.network = cost;
  uncommon_ = std::make_shared<const Uncommon>(std::move(changed));
}

std::span<const std::pair<Seconds, Seconds>> JobRecord::running_intervals() const {
  if (!uncommon_) return {};
  return uncommon_->running_intervals;
}

void JobRecord::set_running_intervals(std::vector<std::pair<Seconds, Seconds>> intervals) {
  Uncommon changed = uncommon_ ? *uncommon_ : Uncommon{};
  changed.running_intervals = std::move(intervals);
  uncommon_ = std::make_shared<const Uncommon>(std::move(changed));
}

Seconds JobRecord::held_seconds() const {
  if (running_intervals().empty()) return end - start;
  Seconds held = 0;
  for (auto [from, to] : running_intervals()) held += to - from;
  return held;
}

double JobRecord::bounded_slowdown(Seconds threshold) const {
  Seconds ran = end - start;
  return std::max(1.0, response() / std::max(ran, threshold));
}

SimResult simulate(const Machine& machine, const Allocator& allocator, const QueuePolicy& policy,
                   const std::vector<Job>& input, const SimOptions& options) {
  auto wall_start = Clock::now();
  SimResult result;
  result.machine_nodes = machine.node_count();
  if (!options.node_types.empty()) {
    NodePool pool(options.node_types, options.type_of, machine.node_count());
    NodePool::Totals totals = pool.totals();
    result.machine_cores = totals.cores;
    result.machine_memory_mb = totals.memory_mb;
    result.machine_gpus = totals.gpus;
  }
  TimedAllocator timed(machine, allocator);

  std::vector<const Job*> arrivals;
  arrivals.reserve(input.size());
  for (const Job& job : input) arrivals.push_back(&job);
  std::stable_sort(arrivals.begin(), arrivals.end(), [](const Job* a, const Job* b) {
    return a->submit != b->submit ? a->submit < b->submit : a->id < b->id;
  });
  result.jobs.reserve(arrivals.size());

  BatchJobs model(machine, allocator, options, arrivals, result);
  EventLoopOptions<BatchCore> loop;
  loop.make_core = [&] {
    return std::make_unique<BatchCore>(machine, timed, policy,
                                       BatchOptions{.max_job_test = options.max_job_test,
                                                    .node_types = options.node_types,
                                                    .type_of = options.type_of,
                                                    .order = options.order});
  };
  loop.on_pass = options.on_pass;
  loop.restart_after_pass = options.restart_after_pass;
  EventLoopStats stats = run_event_loop<BatchCore>(arrivals, model, loop);
  if (options.progress) options.progress(1.0);
  result.passes = stats.passes;
  result.pass_seconds = stats.pass_seconds;
  result.max_pass_seconds = stats.max_pass_seconds;
  result.allocator_calls = timed.calls();
  result.allocator_seconds = timed.seconds();
  result.wall_seconds = seconds_since(wall_start);
  return result;
}

}  // namespace trellis
