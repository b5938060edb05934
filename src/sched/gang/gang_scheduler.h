// GangScheduler: the interface every time-sharing (gang) policy implements, so the quantum
// simulator, the CLI and later the live switcher drive DQT and its baselines the same way.
//
// Time advances in slots (quanta). Each slot the scheduler says which jobs run and on which
// processors; every process of a running job runs in that slot (gang scheduling). A policy is
// pure and deterministic: the same calls in the same order give the same slots.
//
//   auto s = GangPolicyRegistry::builtin().create("dqt-ffapa", 128);
//   (*s)->submit(7, 16);
//   for (const SlotJob& r : (*s)->next_slot()) ...;   // job 7 on processors [r.first, +16)
//   (*s)->finish(7);                                     // it finished in that slot
#pragma once

#include <string>
#include <vector>

#include "core/job.h"
#include "core/result.h"

namespace trellis::gang {

// One job's place in a slot: it runs on processors [first, first + size). (Not a RunningJob of
// sched/policy.h: that is a batch job holding nodes until it ends; this is one slot's tenancy.)
struct SlotJob {
  JobId job = 0;
  int first = 0;
  int size = 0;  // the partition's size (the job's size rounded up to a partition)
  friend bool operator==(const SlotJob&, const SlotJob&) = default;
};

// The load index of thesis section 7.1.4, generalised: for each processor, the number of jobs
// whose partitions contain it (queued or running). For DQT this is the TQLB of the processor's
// leaf; for space sharing it is 0 or 1.
struct LoadIndex {
  int max = 0;
  int min = 0;
  friend bool operator==(const LoadIndex&, const LoadIndex&) = default;
};

class GangScheduler {
 public:
  virtual ~GangScheduler() = default;

  virtual const std::string& name() const = 0;
  virtual int processors() const = 0;

  // A job of `size` processors arrives. Errors (with the job and size) if it can never run.
  virtual Status submit(JobId job, int size) = 0;
  // Decides the next slot: the jobs that run in it, in no particular order. The reference stays
  // valid, and the slot unchanged, until the next call of a non-const method (GangCore reads the
  // slot from there after load()).
  virtual const std::vector<SlotJob>& next_slot() = 0;
  // True when the slot next_slot() decides changes only through submit(), finish(), suspend() and
  // resume() (space sharing): calling next_slot() again with no call between returns the same
  // slot. A simulator may then run one decided slot for many slots (GangCore::repeat_slot).
  virtual bool slots_change_only_on_calls() const { return false; }
  // The job ran in the last slot and is finished (or was removed, e.g. deadlocked).
  virtual void finish(JobId job) = 0;
  // Global idle detection: the job ran in the last slot and now waits for input. Returns true
  // if the policy skips it until resume(); false if it cannot (space sharing keeps the job on
  // its processors, as a batch system does).
  virtual bool suspend(JobId job) = 0;
  // The input a suspended job waited for has arrived; it is schedulable again on its old
  // partition (jobs never migrate).
  virtual void resume(JobId job) = 0;

  virtual LoadIndex load() const = 0;
  // Jobs submitted and not finished (queued, running or suspended).
  virtual int jobs_in_system() const = 0;
};

}  // namespace trellis::gang
