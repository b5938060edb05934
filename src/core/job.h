// Job: one unit of work as schedulers and the simulator see it. Times are seconds (double) on
// whatever clock drives the scheduler: the simulator's virtual clock or the daemon's wall clock.
#pragma once

#include <cstdint>
#include <string>

#include "core/request.h"

namespace trellis {

using JobId = int64_t;
using Seconds = double;

struct Job {
  JobId id = 0;
  Seconds submit = 0;      // when the job enters the queue
  Seconds run_time = 0;    // how long it really runs once started (known to the simulator only)
  Seconds time_limit = 0;  // requested wall time: the kill limit and the backfilling estimate
  Request request;         // nodes, shape, rotation, placement mode
  // Cores, memory, GPUs and how the job shares its nodes (core/resource_request.h); what each
  // node must give it is request.demand, made from these on machines whose nodes have an
  // inventory (sched/demand.h).
  ResourceRequest resources;
  bool share = false;  // may be time-shared (gang scheduled)
  int user = -1;
  int group = -1;
  // The account and user it charges: a node of the fair-share tree of accounts
  // (core/fair_share.h) that a priority order ranks (sched/priority_order.h); -1 for none.
  int association = -1;
  // Its QOS (core/qos.h): an index into the site's QOS that the priority order and the limits
  // were given (PriorityOrder::set_qos, AccountLimits); -1 for none.
  int qos = -1;
  std::string name;
};

}  // namespace trellis
