// SchedulingCore: the state of a cluster's scheduling and the rules that change it, with no clock
// and no I/O. Whoever drives it says what happened (a job was submitted, ended, was cancelled; a
// node went down or came back) and when, and asks for a pass; the core answers with decisions
// keyed by job id. The simulator drives it with a virtual clock (sim/simulator.h); the controller
// daemon drives it with the wall clock and its store, and rebuilds it after a crash from
// snapshot() (Flux-sched's reconstruct()).
//
// One implementation per kind of policy: BatchCore (sched/batch_core.h) over a QueuePolicy and an
// Allocator; GangCore (sched/gang_core.h) over a time-sharing GangScheduler.
#pragma once

#include <optional>
#include <vector>

#include "core/job.h"
#include "core/result.h"
#include "sched/policy.h"

namespace trellis {

// What a pass decided for one job.
struct CoreDecision {
  enum class Kind { kStart, kSuspend, kResume, kKill };
  Kind kind = Kind::kStart;
  JobId job = 0;
  NodeSet nodes;                  // kStart: the nodes it starts on
  std::optional<Box> box;         // kStart: the box, when the allocator placed one
  std::vector<NodeGrant> grants;  // kStart, on nodes with an inventory: what it holds on each
};

struct PassResult {
  Seconds now = 0;
  std::vector<CoreDecision> decisions;
};

// One call a GangCore made to its policy (see CoreSnapshot::policy_calls).
struct PolicyCall {
  enum class Kind { kSubmit, kNextSlot, kFinish, kSuspend, kResume };
  Kind kind = Kind::kNextSlot;
  JobId job = 0;  // kNextSlot: how many slots in a row (the log keeps a run of them as one call)
  int size = 0;   // kSubmit: the job's size
  friend bool operator==(const PolicyCall&, const PolicyCall&) = default;
};

// Everything a core needs to resume where it was: the waiting jobs in priority order, the running
// ones with their nodes, the promises in force, the nodes that are down and when the last pass ran.
struct CoreSnapshot {
  std::vector<Job> queue;
  std::vector<Job> running_jobs;  // the Job of each running job, in the order of `running`
  std::vector<RunningJob> running;
  std::vector<Reservation> reservations;
  NodeSet down;
  Seconds last_pass = 0;
  // GangCore only: every call made to its policy, in order (a gang policy's state is a function
  // of them: restore() replays them into a fresh policy), the jobs skipped as globally idle, the
  // jobs withdrawn before they first ran, and when the slot in progress ends.
  std::vector<PolicyCall> policy_calls;
  std::vector<JobId> idle;
  std::vector<JobId> withdrawn;
  Seconds slot_end = 0;
};

class SchedulingCore {
 public:
  virtual ~SchedulingCore() = default;

  // A job arrives and waits. An error means it can never run on this machine (more nodes than it
  // has, a shape the allocator refuses); the job is not queued.
  virtual Status submit(const Job& job, Seconds now) = 0;
  // A running job ended (completed, failed or killed at its limit): its nodes are free.
  virtual Status ended(JobId job, Seconds now) = 0;
  // A waiting job is withdrawn, or a running one is stopped (its nodes are freed).
  virtual Status cancel(JobId job, Seconds now) = 0;
  // A node stops taking work (a job on it keeps running until it ends) / takes work again.
  virtual Status node_down(NodeId node, Seconds now) = 0;
  virtual Status node_up(NodeId node, Seconds now) = 0;
  // Global state detection (seed 002): the running job `job` is waiting for input on every node.
  // A time-sharing core skips it until busy() and returns true; a batch core keeps it on its
  // nodes (returns false).
  virtual bool idle(JobId job, Seconds now) = 0;
  // The input an idle job waited for has arrived: it is scheduled again (on its old nodes).
  virtual Status busy(JobId job, Seconds now) = 0;
  // One scheduling pass at `now`: the decisions are already applied to the core's state. The
  // result is the core's own buffer, valid until the next pass() or the core's end (a simulator
  // passes millions of times; a fresh vector each time cost more than many passes' work).
  virtual const PassResult& pass(Seconds now) = 0;
  // The promises in force after the last pass (EASY: the head job; conservative: every waiting
  // job); none for time-sharing cores.
  virtual const std::vector<Reservation>& reservations() const = 0;
  // When a pass is due with no event (a promised start, the end of a time slot), if any.
  virtual std::optional<Seconds> next_wakeup() const = 0;

  virtual CoreSnapshot snapshot() const = 0;
  // Replaces the state with `snapshot`'s; an error if it does not fit this machine.
  virtual Status restore(const CoreSnapshot& snapshot) = 0;
};

}  // namespace trellis
