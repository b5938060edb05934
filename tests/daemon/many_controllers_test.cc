// Several controllers on one PostgreSQL store (seed 003's distributed allocators), each with its
// own connection and scheduler thread, running the Controller exactly as trellisd does below
// gRPC (bench/controller_stream.h). Submissions, cancels and exit reports arrive at random
// controllers, and every five seconds the scheduler resigns, so the lease changes hands under
// load. The auditor must then find no node given to two jobs at once, no job lost and no job
// started twice, in the event log, the tables and the agents' record.
//
// The release build runs the 100,000 scheduling decisions (job starts);
// TRELLIS_MANY_CONTROLLERS_DECISIONS lowers that (the ASan preset sets it: the same code, slower).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "../store_engines.h"
#include "bench/controller_stream.h"

namespace trellis {
namespace {

int64_t decisions_wanted() {
  if (const char* env = std::getenv("TRELLIS_MANY_CONTROLLERS_DECISIONS"); env && *env)
    return std::atoll(env);
  return 100000;
}

void expect_clean_stream(int controllers, AllocationMode mode = AllocationMode::kLease,
                         int64_t decisions = decisions_wanted()) {
  std::string url;
  test::fresh_postgres_database(url);
  if (url.empty()) return;
  bench::StreamOptions options;
  options.store_url = url;
  options.controllers = controllers;
  options.allocation = mode;
  options.decisions = decisions;
  // The release build's 100,000 decisions run on the bench's load (512 nodes, a backlog of 1,200
  // jobs from 32 clients): a quarter of the time the 64-node default takes. A short stream (the
  // ASan build's) keeps the default: on the bench's load it would end before the first handover.
  if (decisions >= 20000) {
    options.machine = "torus:8x8x8";
    options.backlog = 1200;
    options.clients = 32;
  }
  // A shorter stream: its handovers come sooner.
  if (mode == AllocationMode::kConcurrent) options.handover_every = 2;
  options.progress = [&](int64_t started) {
    std::cerr << "  " << started << " of " << options.decisions << " starts\n";
  };
  Result<bench::StreamResult> r = bench::run_controller_stream(options);
  ASSERT_TRUE(r) << r.error().message;
  std::string problems;
  for (const std::string& p : r->problems) problems += "\n  " + p;
  EXPECT_GE(r->starts, options.decisions);
  EXPECT_EQ(r->double_allocations, 0) << problems;
  EXPECT_EQ(r->started_twice, 0) << problems;
  EXPECT_EQ(r->lost, 0) << problems;
  EXPECT_EQ(r->bad_transitions, 0) << problems;
  EXPECT_EQ(r->log_gaps, 0);
  EXPECT_GT(r->handovers, 0);
  EXPECT_GT(r->cancels, 0);
  std::cout << controllers << " controllers on PostgreSQL, "
            << (mode == AllocationMode::kConcurrent ? "concurrent" : "lease")
            << " allocation: " << r->starts << " decisions (starts) of " << r->jobs << " jobs in "
            << r->seconds << " s (" << static_cast<int>(r->starts / r->seconds) << "/s), "
            << r->cancels << " cancels, " << r->handovers << " scheduler handovers, "
            << r->repeated_launches << " launches repeated by a new scheduler, " << r->conflicts
            << " starts refused for a conflict and placed again, " << r->overtakes << " overtakes; "
            << r->events << " events audited: 0 double allocations, 0 lost, 0 started twice\n";
}

TEST(ManyControllersTest, TwoControllersAuditClean) {
  expect_clean_stream(2);
}

TEST(ManyControllersTest, FourControllersAuditClean) {
  expect_clean_stream(4);
}

// Concurrent allocation: every controller places the jobs it was given, and the store refuses a
// start on a node another took first. A fifth of the stream (the same code paths; the handovers
// here also make controllers check out, so that the lease holder adopts their pending jobs).
int64_t concurrent_decisions() {
  return std::max<int64_t>(5000, decisions_wanted() / 5);
}

TEST(ManyControllersTest, TwoConcurrentControllersAuditClean) {
  expect_clean_stream(2, AllocationMode::kConcurrent, concurrent_decisions());
}

TEST(ManyControllersTest, FourConcurrentControllersAuditClean) {
  expect_clean_stream(4, AllocationMode::kConcurrent, concurrent_decisions());
}

}  // namespace
}  // namespace trellis
