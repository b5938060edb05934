// QueuePolicy: the one interface every batch queue policy implements ("when does each job start").
//
// A policy is pure and deterministic, like an Allocator: it sees the clock value, the waiting queue
// in priority order, the running jobs with the time each is expected to end (its start plus its
// time limit), the free nodes and the allocator, and returns which queued jobs start now and on
// which nodes. It keeps no state between calls, so the simulator and the live daemon run the same
// code and a test can replay any decision.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "alloc/allocator.h"
#include "core/job.h"

namespace trellis {

struct RunningJob {
  JobId id = 0;
  Seconds start = 0;
  // start + time limit: the latest it can run (it is killed there). Without kill limits a job
  // may run past it; policies then expect it to end at any moment (max(now, expected_end)).
  Seconds expected_end = 0;
  NodeSet nodes;
  int node_count = 0;  // nodes.count(), kept so that projections can add up counts cheaply
  // On nodes with an inventory (alloc/node_sharing.h): what it holds on each of its nodes.
  std::vector<NodeGrant> grants;
};

// A promise a policy made: job `job` will start no later than `start`, on `nodes` (EASY: the head
// job; conservative: every job that does not start now).
struct Reservation {
  JobId job = 0;
  Seconds start = 0;
  NodeSet nodes;
};

// Everything a policy may look at. The queue holds waiting jobs in priority order (arrival order
// for every policy here); their requests are what the allocator is asked for. `reservations` are
// those the policy returned from the previous pass (the caller hands them back, so the policy keeps
// no state of its own); a policy may use them to keep its promises (conservative does).
struct SchedulerView {
  Seconds now = 0;
  std::span<const Job* const> queue;
  std::span<const RunningJob> running;
  const NodeSet& free;
  std::span<const Reservation> reservations = {};
};

// Start queue[queue_index] now on placement.nodes.
struct StartDecision {
  size_t queue_index = 0;
  Placement placement;
};

struct Schedule {
  std::vector<StartDecision> starts;
  std::vector<Reservation> reservations;
};

class QueuePolicy {
 public:
  virtual ~QueuePolicy() = default;
  // The registry name, e.g. "easy".
  virtual std::string_view name() const = 0;
  // One scheduling pass at view.now. Started jobs get disjoint subsets of view.free.
  virtual Schedule schedule(const SchedulerView& view, const Allocator& allocator) const = 0;
};

}  // namespace trellis
