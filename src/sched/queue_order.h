// QueueOrder: what puts a core's waiting queue in priority order before each pass. Without one a
// core keeps arrival order (every textbook policy's "priority"); with one, every queue policy
// (FCFS, EASY, conservative, Scan) sees the queue as it sorted it, so FCFS becomes "highest
// priority first" and backfill reserves for the highest-priority job. The order may keep state
// (a fair-share order keeps each user's usage), so the core tells it what ended.
//
// Not owned by the core; it must outlive it. Implementations: sched/priority_order.h
// (multifactor priority: age, fair-share, job size).
#pragma once

#include <cstddef>
#include <vector>

#include "core/job.h"

namespace trellis {

class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  // `job` started at `start` (in a pass, or by another allocator).
  virtual void started(const Job& job, Seconds start) = 0;
  // `job`, started at `start`, ended (or was cancelled while running) at `end`; a start taken
  // back (BatchCore::unstart) ends at its start.
  virtual void ended(const Job& job, Seconds start, Seconds end) = 0;
  // Sorts `queue` highest priority first at `now`. Only its first `head` jobs (0: all) need be
  // in order, the ones a pass shows the policy (BatchOptions::max_job_test); behind them, any
  // order will do, which saves sorting a deep queue whole.
  virtual void order(std::vector<const Job*>& queue, Seconds now, size_t head = 0) = 0;
};

}  // namespace trellis
