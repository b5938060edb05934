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
// Exclusive jobs (exclusive_jobs, for a controller): a job that may not share (Job::share false)
// keeps whole nodes, as on a queue policy. The policy places it like any job; once nothing that
// has started overlaps its partition it starts, and from then on runs in every slot, never
// switched out, while no other job starts on its nodes. Until it starts, no other job starts on
// them either (so that it is not starved), except an exclusive job placed before it (so that two
// never wait for each other). Jobs that have started before it keep their turns until they end.
// The policy is not told: it may give a slot to a job the core keeps out of it; the core leaves
// such a job out (it does not start, or stays switched out). The simulator time-shares every job.
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

#include <cstdint>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <utility>
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
  // Honour Job::share == false (see above). Needs report_switches.
  bool exclusive_jobs = false;
};

class GangCore final : public SchedulingCore {
 public:
  // `policy` must be fresh (no calls made to it) and outlive the core; `order` has one rank per
  // processor of the policy (throws std::invalid_argument otherwise: a programming error).
  GangCore(gang::GangScheduler& policy, Curve order, GangCoreOptions options = {});
  GangCore(const GangCore&) = delete;  // slot_view_ may point into this core
  GangCore& operator=(const GangCore&) = delete;

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
  // Runs the slot the last pass decided for `extra` more slots, as if `extra` more passes (with no
  // event between) had decided it again: next_wakeup() moves by extra slices. Only for policies
  // whose slots change only on calls (repeats_slots()), right after a pass that decided a
  // non-empty slot; throws std::logic_error otherwise (a programming error). A simulator uses it
  // to skip the passes of a space-sharing policy between events.
  void repeat_slot(long extra);
  bool repeats_slots() const { return repeats_slots_; }
  // The end of the current slot while jobs are in the system.
  std::optional<Seconds> next_wakeup() const override {
    if (jobs_.empty()) return std::nullopt;
    return slot_end_;
  }
  CoreSnapshot snapshot() const override;
  // The core must be fresh (as a restarted controller's is).
  Status restore(const CoreSnapshot& snapshot) override;

  // Read-only views, for observers (metrics, tests).
  // The jobs of the current slot, as the policy named them. They stay the same until the next
  // pass(), but the reference only until the core's next non-const call (until then it may be
  // the policy's own vector, see own_slot()): a caller that calls the core while it goes through
  // the slot reads slot() again after each call.
  const std::vector<gang::SlotJob>& slot() const { return *slot_view_; }
  gang::LoadIndex load() const { return policy_.load(); }
  // Jobs submitted and not ended (waiting, running, idle, or withdrawn but not yet picked).
  int jobs_in_system() const { return static_cast<int>(jobs_.size()); }
  const std::string& policy_name() const { return policy_.name(); }
  const Curve& order() const { return order_; }
  // The nodes of the partition [first, first + size) of the policy's processors.
  NodeSet partition_nodes(int first, int size) const;
  // The job `id` in the system, or nullptr.
  const Job* find(JobId id) const;
  // Why a job in the system has not started yet: it waits for the policy to give it a slot, or
  // the policy has, but the core keeps it off exclusive jobs' nodes (see above).
  enum class Wait { kForASlot, kForExclusiveNodes };
  Wait why_waiting(JobId id) const;
  // The partition [first, first + size) of the policy's processors that a job in the system has
  // run on; nullopt before it first runs (or when it is not in the system).
  std::optional<std::pair<int, int>> partition_of(JobId id) const {
    const SlotState* j = jobs_.find(id);
    if (j == nullptr || j->first < 0) return std::nullopt;
    return std::pair{j->first, j->size};
  }

 private:
  // What a switch reads for every job of every slot, kept small (JobTable holds it by id).
  struct SlotState {
    int first = -1;  // its partition, once it has run
    int size = 0;
    long last_slot = -1;  // the number of the last slot it ran in
    bool idle = false;
    bool withdrawn = false;
    bool kept_off = false;  // placed by the policy, kept off exclusive jobs' nodes; not started
  };
  struct Details {
    Job job;
    Seconds start = -1;  // its first slot's start; -1 until it runs
  };

  // A byte per dense job id: has the job run. Only a fast path: the switches of a slot test it
  // instead of the job's SlotState, which is 32 times larger (ids without a byte go there). A
  // byte, not std::vector<bool>'s bit: its indexing cost a tenth of a simulated slot.
  bool has_run(JobId job) const {
    return static_cast<std::make_unsigned_t<JobId>>(job) < has_run_.size() &&
           has_run_[static_cast<size_t>(job)] != 0;
  }
  void mark_run(JobId job, bool ran);

  // An exclusive job that the policy has placed (exclusive_jobs), in the order first placed.
  struct Exclusive {
    JobId job = 0;
    int first = 0;
    int size = 0;
    bool started = false;
  };
  bool is_exclusive(JobId job) const;
  // Lines up the exclusive jobs that `placed` (the policy's slot) places first, starts those
  // whose nodes are clear, and gives the slot that runs: every started exclusive job, and the
  // policy's others but those kept off exclusive jobs' nodes.
  const std::vector<gang::SlotJob>& keep_exclusive(const std::vector<gang::SlotJob>& placed);
  // The job leaves the line (it ended or was withdrawn); before details_ forgets it.
  void forget_exclusive(JobId job);

  // The parts of a pass (pass() keeps the every-slot path short: a pass is one slot).
  // Withdrawn jobs in `next` leave the policy and the slot is decided again; the final slot.
  const std::vector<gang::SlotJob>& drop_withdrawn(const std::vector<gang::SlotJob>* next);
  // A job of the new slot runs for the first time at `now`: its kStart, appended to `into`.
  void first_start(const gang::SlotJob& r, SlotState& j, Seconds now,
                   std::vector<CoreDecision>& into);
  // report_switches: every kSuspend, then the kStarts and kResumes of the switch to `next`.
  void switch_reported(const std::vector<gang::SlotJob>& next, Seconds now);

  // The policy's calls, each logged (see CoreSnapshot::policy_calls).
  Status call_submit(JobId job, int size);
  // The current slot is the policy's own vector until the core next calls a method of the
  // policy that may change it (GangScheduler::next_slot: const methods leave it); then a copy.
  // Copying every slot cost a tenth of a simulated slot, and most slots end with no such call.
  void own_slot() {
    if (slot_view_ == &slot_) return;
    slot_ = *slot_view_;
    slot_view_ = &slot_;
  }

  // Inline: a pass calls it for every slot. A run of slots is one call in the log. (The slot in
  // force needs no own_slot(): pass() calls it, and has kept or dropped the last slot already.)
  const std::vector<gang::SlotJob>& call_next_slot() {
    if (!calls_.empty() && calls_.back().kind == PolicyCall::Kind::kNextSlot)
      ++calls_.back().job;
    else
      calls_.push_back({PolicyCall::Kind::kNextSlot, 1, 0});
    return policy_.next_slot();
  }
  void call_finish(JobId job);
  bool call_suspend(JobId job);
  void call_resume(JobId job);

  gang::GangScheduler& policy_;
  const bool repeats_slots_;  // the policy's slots_change_only_on_calls(), read once
  Curve order_;
  bool identity_order_ = false;  // processor p is node p
  GangCoreOptions options_;
  JobTable<SlotState> jobs_;
  std::unordered_map<JobId, Details> details_;
  std::vector<uint8_t> has_run_;
  std::vector<gang::SlotJob> slot_;  // the current slot once owned (see own_slot())
  const std::vector<gang::SlotJob>* slot_view_ = &slot_;  // the current slot
  long slots_ = 0;                                        // slots decided so far
  int withdrawn_waiting_ = 0;  // withdrawn jobs the policy has not picked yet
  long not_run_ = 0;           // jobs in jobs_ that have not run (first < 0)
  Seconds last_pass_ = 0;
  Seconds slot_end_ = 0;
  std::vector<PolicyCall> calls_;
  const std::vector<Reservation> no_reservations_;
  PassResult result_;                      // the last pass's, reused (see SchedulingCore::pass)
  std::vector<CoreDecision> switched_in_;  // switch_reported() scratch
  std::vector<Exclusive> exclusive_;       // placed exclusive jobs not ended
  int exclusive_in_system_ = 0;            // exclusive jobs submitted and not ended
  std::vector<gang::SlotJob> kept_;        // keep_exclusive()'s slot
};

}  // namespace trellis
