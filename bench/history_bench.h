// `trellis bench history`: accounting queries (sacct, trellis history) on a store of many finished
// jobs. The store is filled by the database itself (one INSERT ... SELECT over a generated series:
// N jobs of U users, submitted evenly over D days, each running up to an hour), then a one-user,
// one-day query (jobs submitted by the day's end and not ended before its start, the query sacct
// -u USER -S DAY -E DAY+1 makes) runs through StateStore::list_jobs for several users and days.
// Reference, measured in the same run on the same store: the same queries with the accounting
// indexes of schema 5 dropped (a scan of the jobs table).
#pragma once

#include <ostream>

namespace trellis::bench {

struct HistoryBenchOptions {
  long jobs = 1000000;
  int users = 100;
  int days = 100;
  int queries = 20;       // timed queries per configuration (each a different user and day)
  bool postgres = false;  // also on a private PostgreSQL server
};

// Prints the table; 0, or 1 when a store cannot be made or a query's answer is wrong.
int run_history_bench(const HistoryBenchOptions& options, std::ostream& out);

}  // namespace trellis::bench
