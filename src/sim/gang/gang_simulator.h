// The quantum gang simulator (thesis section 7.2): time advances in slots of `slice` time units;
// a GangScheduler decides each slot which jobs run; only jobs in active partitions advance.
// Scheduling and switching overheads are not modelled, as in the thesis.
//
// It is the time-shared mode of the one simulation loop (sim/event_loop.h): the loop drives a
// GangCore (sched/gang_core.h) whose passes are the slot switches, and this file's job model
// runs the jobs of each slot unit by unit and measures. `trellis sim --sched <gang policy>` runs
// the same mode in seconds (simulate_time_shared) and gets a SimResult like any batch run.
//
// Global-state model (thesis chapter 6): interactive jobs wait for user input between bursts.
// The scheduler learns a job's global state only at a switch, i.e. at the end of a slot the job
// ran in. With idle detection on, a job found globally idle (waiting for input) is suspended
// until its input arrives, and a job found globally stopped (deadlocked) is removed and reported.
// Without it both keep being scheduled and waste their slots.
//
// Metrics, as the thesis defines them:
//   utilization  processors in active partitions / P, averaged over the run (U~);
//   offered load W_actual = sum of size * length / (P * T) over jobs submitted in [0, T);
//   RETR         (end - submit) / length per finished job: the slowdown under time sharing;
//   TQLB         max and min over processors of jobs sharing it (GangScheduler::load()), over time;
//   correlation  Pearson's r between log2(size) and RETR over finished jobs.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "sched/gang/gang_scheduler.h"
#include "sim/gang/sim_job.h"
#include "sim/simulator.h"
#include "topology/curve.h"

namespace trellis::gangsim {

struct GangSimConfig {
  long end_time = -1;  // simulate [0, end_time); -1: until every job has finished or stopped
  // With end_time set: admit only the jobs submitted before end_time, then keep simulating past
  // it until every admitted job has finished or stopped (no job is left unfinished).
  bool drain = false;
  long slice = 1;  // time units per slot
  bool idle_detection = false;
  int trace_slots = 0;       // record the first N slots' running jobs
  long load_samples = 1000;  // about this many points in the TQLB series
  // Keep an ActivitySample at every change (for timelines) and each job's active spans.
  bool record_activity = false;
  // At most this many active spans over all jobs (about 16 bytes each); past it the jobs still
  // running have spans_complete = false and record no more.
  std::size_t max_active_spans = std::size_t{1} << 21;
  std::function<void(long now, long end)> progress;  // called now and then on long runs
  // After this many scheduling passes (GangSimResult::passes), carry on with a fresh policy and
  // core restored from the old core's snapshot (-1: never); the run must not change (tests check
  // it).
  long restart_after_pass = -1;
};

enum class JobFate { kFinished, kDeadlocked, kUnfinished };

struct JobOutcome {
  JobId id = 0;
  int size = 0;
  long submit = 0;
  long start = -1;  // the first slot it ran in; -1 if never
  long end = -1;    // finish or removal time; -1 if unfinished
  int first = -1;   // its partition: processors [first, first + partition)
  int partition = 0;
  long work = 0;
  long done = 0;    // compute units done
  double retr = 0;  // (end - submit) / work for finished jobs
  JobFate fate = JobFate::kUnfinished;
  // With config.record_activity: the time units [from, to) in which it was switched in, in order,
  // consecutive slots merged into one span.
  std::vector<std::pair<long, long>> active_spans;
  bool spans_complete = true;  // false when max_active_spans cut its record short
};

struct SlotRecord {
  long time = 0;
  std::vector<gang::SlotJob> running;  // left to right (by first processor)
};

// The machine at the start of a slot whose numbers differ from the slot before.
struct ActivitySample {
  long time = 0;
  int active_processors = 0;  // in active partitions
  int running_jobs = 0;
  int jobs_in_system = 0;
  friend bool operator==(const ActivitySample&, const ActivitySample&) = default;
};

struct LoadSample {
  long time = 0;
  gang::LoadIndex load;
  friend bool operator==(const LoadSample&, const LoadSample&) = default;
};

struct GangSimResult {
  std::string policy;
  int processors = 0;
  long duration = 0;  // time units simulated
  long slots = 0;
  // Scheduling passes: one per slot, but a space-sharing policy's slot runs from one event (an
  // arrival, a job's end) to the next in one pass (GangCore::repeat_slot).
  long passes = 0;
  double offered_load = 0;        // W_actual
  double utilization = 0;         // processors in active partitions / P
  double useful_utilization = 0;  // processors doing work (not waiting for input) / P
  double mean_retr = 0;
  double retr_size_correlation = 0;
  int max_tqlb = 0;  // the largest max-TQLB seen
  double mean_max_tqlb = 0;
  double mean_min_tqlb = 0;
  long idle_skips = 0;           // times a globally idle job was suspended
  std::vector<JobOutcome> jobs;  // in submit order
  std::vector<LoadSample> load_series;
  std::vector<SlotRecord> trace;
  std::vector<ActivitySample> activity;  // when config.record_activity

  int finished() const;
  int deadlocked() const;
};

// Errors: a job the scheduler rejects (named with its id and size), or a bad config.
Result<GangSimResult> simulate_gang(const std::vector<SimJob>& jobs, gang::GangScheduler& scheduler,
                                    const GangSimConfig& config);

// A fresh gang policy, for a restart (GangSimConfig::restart_after_pass).
using GangPolicyFactory = std::function<std::unique_ptr<gang::GangScheduler>()>;
Result<GangSimResult> simulate_gang(const std::vector<SimJob>& jobs,
                                    const GangPolicyFactory& make_policy,
                                    const GangSimConfig& config);

// A workload in seconds time-shared in slots of `quantum` seconds on `machine`, the policy's
// processor p being node order.node_at(p). A job arrives at the first slot boundary at or after
// its submit time and needs ceil(min(run time, time limit) / quantum) slots of work; jobs with
// more nodes than the machine or no run time are rejected. `run` is what a batch simulation
// returns (records in seconds, each job's running intervals, the timeline); `gang` the
// time-sharing metrics in slots.
struct TimeSharedRun {
  SimResult run;
  GangSimResult gang;
};
Result<TimeSharedRun> simulate_time_shared(const Machine& machine, gang::GangScheduler& scheduler,
                                           const Curve& order, const std::vector<Job>& jobs,
                                           double quantum, const GangSimConfig& config,
                                           bool record_placements);

}  // namespace trellis::gangsim
