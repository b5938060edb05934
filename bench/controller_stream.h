// A synthetic stream through several controllers that share one store, in one process: each
// controller runs exactly as trellisd runs it below gRPC (its own store connection, its own
// scheduler thread woken by the store's change feed or by its own calls), and the stream's
// submissions, cancels and exit reports go to all of them. The agents are faked at the AgentLink
// (one set, shared, so a launch from whichever controller schedules is seen, and a repeated one is
// ignored as a real agent ignores it): a task runs a few milliseconds of wall time.
//
// After the stream every job is let finish, and an auditor reads the event log, the tables and the
// agents' record: nodes given to two jobs at once, jobs started twice, jobs lost, impossible state
// changes, gaps in the log. ManyControllersTest asserts on the audit; `trellis bench controllers`
// prints the rate and latencies.
//
//   StreamOptions options{.store_url = url, .controllers = 2, .decisions = 100000};
//   Result<StreamResult> r = run_controller_stream(options);
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "daemon/config.h"
#include "store/state_store.h"

namespace trellis::bench {

struct StreamOptions {
  std::string store_url;  // a fresh store (sqlite:PATH, postgresql://...)
  std::string machine = "torus:4x4x4";
  int controllers = 1;
  int64_t decisions = 100000;  // the stream stops once this many jobs have started
  int backlog = 150;           // jobs kept in the system (a queue for passes)
  int clients = 0;             // client threads submitting at once; 0: max(4, controllers)
  double cancel_fraction = 0.05;
  double handover_every = 5.0;  // seconds between forced handovers of the scheduler role; 0: none
  double scheduler_lease = 0.5;
  // Lease: the lease holder places every job; concurrent: each controller places the jobs it was
  // given (daemon/controller.h).
  AllocationMode allocation = AllocationMode::kLease;
  // [controller] batch_wait: how long a busy batch of submissions or exits waits for more.
  double batch_wait = ControllerSettings{}.batch_wait;
  std::function<void(int64_t started)> progress;  // called every few seconds, if set
  // CPU seconds the database server has used so far, if known (PostgresServer::cpu_seconds);
  // sampled at the start and the end of the stream.
  std::function<double()> database_cpu;
};

struct StreamResult {
  int64_t starts = 0;  // scheduling decisions: start events in the log
  int64_t jobs = 0;    // submissions acknowledged
  int64_t cancels = 0, handovers = 0, repeated_launches = 0;
  double seconds = 0;  // from the first submission to the last start
  // Over the same window: round trips of every controller's store connection, CPU seconds of
  // this process (the controllers, and the fake clients and agents that drive them) and of the
  // database server (0 when not known: SQLite runs inside the process).
  int64_t window_starts = 0;  // starts launched within the window
  int64_t round_trips = 0;
  double process_cpu = 0, database_cpu = 0;
  // The same window's store calls by kind, summed over the controllers: calls, round trips and
  // statements (StateStore::operation_counts()).
  std::map<std::string, StateStore::OperationCounts> operations;
  std::vector<double> start_latency;  // submit to first start of each job that started, seconds
  // Concurrent allocation: starts refused because another controller took a node (or the job)
  // first, each placed again (Controller::conflicts()). Any mode: starts that overtook an earlier
  // waiting job that fit (bench/overtakes.h).
  int64_t conflicts = 0;
  int64_t overtakes = 0;

  // The audit.
  int64_t events = 0;
  int64_t double_allocations = 0;  // in the log, or at the agents
  int64_t started_twice = 0;       // in the log, or at the agents
  int64_t lost = 0;                // acknowledged jobs missing or not final; unknown jobs
  int64_t bad_transitions = 0, log_gaps = 0;
  std::vector<std::string> problems;  // the first few, for messages
  bool clean() const {
    return double_allocations == 0 && started_twice == 0 && lost == 0 && bad_transitions == 0 &&
           log_gaps == 0;
  }
};

// Runs the stream; an error when a controller failed a call (the message names it) or the jobs
// did not all finish within two minutes of the stream's end.
Result<StreamResult> run_controller_stream(const StreamOptions& options);

}  // namespace trellis::bench
