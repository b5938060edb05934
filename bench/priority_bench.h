// `trellis bench priority`: what fair-share priority costs a scheduling pass at a deep queue, the
// multi-user issue's goals: 100,000 queued jobs from 1,000 users in 100 accounts (10 users each),
// EASY on flat:4096 with trellisd's default max_job_test of 500, each pass after one running job
// ends and the clock moves on a minute. The same stream runs twice in the same process: with the
// queue in arrival order (the reference) and with PriorityOrder (sched/priority_order.h: Fair Tree
// over the accounts, decayed usage, the queue sorted by priority before every pass). Printed: the
// pass time p50 / p99 / max of both and their ratio, the time of the priority recalculation alone
// (Fair Tree and the sort; nothing else waits on it: it runs inside the pass), and whether a
// running job's usage moved its user's level fair-share by the next pass (Slurm's refresh is every
// PriorityCalcPeriod, 5 minutes by default).
//
// --quick: 10,000 jobs from 100 users, for CI.
#pragma once

#include <ostream>

namespace trellis::bench {

struct PriorityBenchOptions {
  bool quick = false;
  int passes = 0;  // timed; 0 = 200 (quick: 50)
};

int run_priority_bench(const PriorityBenchOptions& options, std::ostream& out);

}  // namespace trellis::bench
