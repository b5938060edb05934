// GangCore: the SchedulingCore of time-sharing (gang) policies: DQT and Fair-DQT, the Slurm-like
// gang scheduler and the space-sharing baselines FCFS-BB and ScanUp (sched/gang/registry.h).
//
// Time goes in slots. Each pass is a gang switch: the policy decides the next slot and the core
// answers with what changes on the nodes: jobs switched out (kSuspend), jobs that run for the
// first time (kStart, on the nodes of their partition) and jobs switched back in (kResume). A
// policy numbers its processors 0..P-1; processor p is the node `order.node_at(p)`, so a
// partition is a run along the allocator's curve (the buddy allocator's Hilbert curve on a mesh).
// Jobs never migrate: a job keeps its partition from its first slot to its end.
//
// Whoever drives the core calls pass() at next_wakeup() (the end of the slot), or at once when
// work arrives while nothing runs. Jobs that end, are found idle (waiting for input) or busy
// again during a slot are reported before the pass that ends it, as the thesis's switch does:
// finished jobs leave, idle ones are skipped until their input arrives (seed 002, chapter 6).
//
// A gang policy's state is a deterministic function of the calls made to it, so snapshot() keeps
// the calls (a run of consecutive slots is one entry) and restore() replays them into the fresh
// policy of a restarted core.
//
//   GangCore core(*policy, order, {.slice = 30});
//   core.submit(job, 0);
//   for (const CoreDecision& d : core.pass(0).decisions) ...;   // kStart on d.nodes
//   core.ended(job.id, 90);                                      // before the pass at 90
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "core/job_table.h"
#include "sched/core.h"
#include "sched/gang/gang_scheduler.h"
#include "topology/curve.h"

namespace trellis {

struct GangCoreOptions {
  Seconds slice = 1;  // a slot's length
  // When a slot runs nothing (every job waits for input): how soon to look again. The simulator
  // uses its time unit; a controller would pass at the next event instead.
  Seconds empty_slot = 1;
  // Report every switch (kSuspend, kResume) as well as first starts. A controller must freeze and
  // thaw processes, so it wants them; the simulator reads slot() and turns them off, as they cost
  // two lookups per job and slot.
  bool report_switches = true;
};

class GangCore final : public SchedulingCore {
 public:
  // `policy` must be fresh (no calls made to it) and outlive the core; `order` has one rank per
  // processor of the policy (throws std::invalid_argument otherwise: a programming error).
  GangCore(gang::GangScheduler& policy, Curve order, GangCoreOptions options = {});

  Status submit(const Job& job, Seconds now) override;
  // The job must have run (a job ends only while it runs).
  Status ended(JobId job, Seconds now) override;
  // A job that has run ends at once; one that has not is withdrawn: it never runs (it leaves the
  // policy when the policy first picks it, and the slot is decided again without it).
  Status cancel(JobId job, Seconds now) override;
  // A gang policy keeps one partition tree over every node: nodes cannot be taken out of it.
  Status node_down(NodeId node, Seconds now) override;
  Status node_up(NodeId node, Seconds now) override;
  // The job ran in the current slot and waits for input: the policy skips it if it can (space
  // sharing cannot: the job keeps its partition). Without report_switches the core does not
  // track who ran in which slot: the caller (the simulator, which reads slot()) vouches for it.
  bool idle(JobId job, Seconds now) override;
  Status busy(JobId job, Seconds now) override;
  const PassResult& pass(Seconds now) override;
  // Gang policies make no promises.
  const std::vector<Reservation>& reservations() const override { return no_reservations_; }
  // The end of the current slot while jobs are in the system.
  std::optional<Seconds> next_wakeup() const override {
    if (jobs_.empty()) return std::nullopt;
    return slot_end_;
  }
  CoreSnapshot snapshot() const override;
  // The core must be fresh (as a restarted controller's is).
  Status restore(const CoreSnapshot& snapshot) override;

  // Read-only views, for observers (metrics, tests).
  // The jobs of the current slot, as the policy named them.
  const std::vector<gang::SlotJob>& slot() const { return slot_; }
  gang::LoadIndex load() const { return policy_.load(); }
  // Jobs submitted and not ended (waiting, running, idle, or withdrawn but not yet picked).
  int jobs_in_system() const { return static_cast<int>(jobs_.size()); }
  const std::string& policy_name() const { return policy_.name(); }
  const Curve& order() const { return order_; }
  // The nodes of the partition [first, first + size) of the policy's processors.
  NodeSet partition_nodes(int first, int size) const;
  // The job `id` in the system, or nullptr.
  const Job* find(JobId id) const;

 private:
  // What a switch reads for every job of every slot, kept small (JobTable holds it by id).
  struct SlotState {
    int first = -1;  // its partition, once it has run
    int size = 0;
    long last_slot = -1;  // the number of the last slot it ran in
    bool idle = false;
    bool withdrawn = false;
  };
  struct Details {
    Job job;
    Seconds start = -1;  // its first slot's start; -1 until it runs
  };

  // A bit per dense job id: has the job run. Only a fast path: the switches of a slot test it
  // instead of the job's SlotState, which is 256 times larger (ids without a bit go there).
  bool has_run(JobId job) const;
  void mark_run(JobId job, bool ran);

  // The policy's calls, each logged (see CoreSnapshot::policy_calls).
  Status call_submit(JobId job, int size);
  const std::vector<gang::SlotJob>& call_next_slot();
  void call_finish(JobId job);
  bool call_suspend(JobId job);
  void call_resume(JobId job);

  gang::GangScheduler& policy_;
  Curve order_;
  bool identity_order_ = false;  // processor p is node p
  GangCoreOptions options_;
  JobTable<SlotState> jobs_;
  std::unordered_map<JobId, Details> details_;
  std::vector<bool> has_run_;
  std::vector<gang::SlotJob> slot_;
  long slots_ = 0;             // slots decided so far
  int withdrawn_waiting_ = 0;  // withdrawn jobs the policy has not picked yet
  Seconds last_pass_ = 0;
  Seconds slot_end_ = 0;
  std::vector<PolicyCall> calls_;
  const std::vector<Reservation> no_reservations_;
  PassResult result_;  // the last pass's, reused (see SchedulingCore::pass)
};

}  // namespace trellis
