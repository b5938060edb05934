// Simulator: replays a workload through a queue policy and an allocator on a virtual clock, by
// driving a BatchCore (sched/batch_core.h), the same scheduling core the controller daemon drives
// with the wall clock. This is the batch mode of the one simulation loop (sim/event_loop.h; the
// time-shared mode is sim/gang/gang_simulator.h): it only keeps time, turns job ends into events
// and measures. SimResult is what both modes return.
//
// Events are job arrivals, job ends and the start times of the policy's reservations (so a
// reserved job starts on time even when no job ends then). At each instant the simulator first
// frees the nodes of the jobs that end, then queues the arrivals, then runs one policy pass and
// starts what it decides. A job runs for its run time, or is killed at its time limit when it would
// run longer (state TO), as a real resource manager does (SimOptions::kill_at_time_limit). The run
// is deterministic for a given workload, policy and allocator (the random allocator is seeded);
// only the measured decision times vary.
//
// Jobs that can never be placed (more nodes than the machine, a shape the allocator rejects) are
// not queued; they are reported as rejected with the reason.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "alloc/allocator.h"
#include "sched/batch_core.h"
#include "sched/policy.h"
#include "sim/runtime_model.h"
#include "topology/machine.h"

namespace trellis {

struct SimOptions {
  // Keep each job's nodes (as runs of consecutive ids) and its locality metrics: needed for the
  // per-job CSV, the Gantt chart and the occupancy maps; off for pure throughput measurements.
  bool record_placements = true;
  // Kill a job at its time limit (state TO), as a resource manager does. When false, a job runs
  // its whole run time; backfilling still takes the limit as its estimate, and a job that runs
  // past it is expected to end at any moment.
  bool kill_at_time_limit = true;
  // Called now and then with the fraction of jobs finished, for a progress bar.
  std::function<void(double)> progress;
  // Called after each scheduling pass with its decisions and the core as they left it (a reserved
  // job is still queued: core.find(id)); tests use it to check that promises are kept.
  std::function<void(const PassResult&, const BatchCore&)> on_pass;
  // After this many passes, carry on with a fresh core restored from the old one's snapshot, as a
  // restarted controller does (-1: never). The schedule must not change: tests check it.
  long restart_after_pass = -1;
  // What placement does to run times (sim/runtime_model.h); not owned, used by one run at a time.
  // nullptr: run times as recorded, like the `trace` model.
  RuntimeModel* runtime_model = nullptr;
  // Queued jobs a pass looks at, from the head (BatchOptions::max_job_test); 0 = all. trellisd
  // bounds its passes by default: give its `max_job_test` to predict it exactly.
  size_t max_job_test = 0;
  // The nodes' inventory (BatchOptions::node_types, type_of): given, jobs with a demand share
  // nodes (sim/workload.h: set_node_resources), and the result counts cores, memory and GPUs.
  std::vector<NodeInventory> node_types;
  std::vector<uint16_t> type_of;
  // Puts the queue in priority order before each pass (sched/queue_order.h: fair-share); not
  // owned. Null: arrival order. One run at a time: it keeps the users' usage.
  QueueOrder* order = nullptr;
};

struct JobRecord {
  JobId id = 0;
  Seconds submit = 0, start = 0, end = 0;
  Seconds run_time = 0;  // as logged (the job ran min(run_time, time_limit))
  Seconds time_limit = 0;
  int nodes = 0;            // nodes it held (a gang partition or a box may exceed the request)
  int requested_nodes = 0;  // nodes it asked for
  int user = -1;            // from the workload; -1 when unknown
  // On nodes with an inventory: the cores, memory and GPUs it held, summed over its nodes, and
  // the cores it asked for (a whole node holds more than a job of one processor asks).
  int64_t cores = 0, memory_mb = 0, gpus = 0, asked_cores = 0;
  bool timed_out = false;                       // killed at its limit (TO), else completed (CD)
  std::optional<int> leaf_switches;             // fat trees, when placements are recorded
  double average_hops = 0;                      // when placements are recorded
  std::vector<std::pair<NodeId, NodeId>> runs;  // inclusive id ranges, when recorded

  // The box it got, when the allocator placed a box (mesh/torus); nullptr otherwise.
  const Box* box() const { return uncommon_ && uncommon_->box ? &*uncommon_->box : nullptr; }
  void set_box(const Box& box);
  // Time-shared (gang) runs: the intervals in which the job was switched in, in order. Empty when
  // it ran without a break from start to end (every batch job).
  std::span<const std::pair<Seconds, Seconds>> running_intervals() const;
  void set_running_intervals(std::vector<std::pair<Seconds, Seconds>> intervals);
  // What the run-time model found when it started (its inflation and network figures); nullptr
  // when the run had no model that measures.
  const NetworkCost* network() const {
    return uncommon_ && uncommon_->network ? &*uncommon_->network : nullptr;
  }
  void set_network(const NetworkCost& cost);

  Seconds wait() const { return start - submit; }
  // How long it held its nodes: the sum of its running intervals, or end - start.
  Seconds held_seconds() const;
  Seconds response() const { return end - submit; }
  // max(1, response / max(ran, threshold)) with `ran` the time it really ran; the threshold keeps
  // very short jobs from dominating the mean (10 s is the literature's usual choice).
  double bounded_slowdown(Seconds threshold = kBoundedSlowdownThreshold) const;
  static constexpr Seconds kBoundedSlowdownThreshold = 10;

 private:
  // The box, the running intervals and the network figures, which only some runs have, live out of
  // line: a run's records are most of its memory, and every fresh page costs a fault (on the NASA
  // iPSC trace keeping them inline made a cold `bench sim` run 15% slower). Shared and immutable,
  // so a copied record is an independent value; the setters replace it.
  struct Uncommon {
    std::optional<Box> box;
    std::vector<std::pair<Seconds, Seconds>> running_intervals;
    std::optional<NetworkCost> network;
  };
  std::shared_ptr<const Uncommon> uncommon_;
};

struct RejectedJob {
  JobId id = 0;
  std::string reason;
  Seconds submit = 0;
  Seconds run_time = 0, time_limit = 0;
  int requested_nodes = 0;
  int user = -1;
};
// The record of `job` rejected for `reason`.
RejectedJob rejected_job(const Job& job, std::string reason);

// The system's state after each policy pass (one sample per distinct instant).
struct TimelineSample {
  Seconds time = 0;
  int busy_nodes = 0;
  int queued_jobs = 0;
  // The queue head has no more nodes than are free but the allocator cannot place it: external
  // fragmentation (it would fit by count, not by shape).
  bool head_blocked_by_shape = false;
  // Nodes in the largest free box (mesh/torus, when placements are recorded); -1 otherwise. On
  // machines of more than 65,536 nodes it is measured at about 1,000 instants over the arrivals'
  // span and each measurement stands until the next (SimResult::largest_free_box_sampled).
  int largest_free_box = -1;
  // On nodes with an inventory: cores held, and the free cores that sit on nodes in use over
  // all free cores (NodePool::Totals::fragmentation); -1 otherwise.
  int64_t busy_cores = -1;
  double fragmentation = -1;
};

struct SimResult {
  std::vector<JobRecord> jobs;  // in order of start
  std::vector<RejectedJob> rejected;
  std::vector<TimelineSample> timeline;
  int machine_nodes = 0;
  // On nodes with an inventory: what the machine has in all (0 otherwise).
  int64_t machine_cores = 0, machine_memory_mb = 0, machine_gpus = 0;
  bool largest_free_box_sampled = false;
  long passes = 0;
  double pass_seconds = 0;  // wall time spent in policy passes
  double max_pass_seconds = 0;
  long allocator_calls = 0;      // allocate() calls made by the policy
  double allocator_seconds = 0;  // wall time in those calls
  double wall_seconds = 0;       // the whole run
};

// Runs `jobs` (any order; they are sorted by submit time) to completion.
SimResult simulate(const Machine& machine, const Allocator& allocator, const QueuePolicy& policy,
                   const std::vector<Job>& jobs, const SimOptions& options = {});

}  // namespace trellis
