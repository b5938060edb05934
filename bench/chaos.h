// The chaos run: a real local cluster (`trellis cluster up`: munged, trellisd, agents, real job
// processes) takes a random stream of submissions, cancels and short jobs while a driver injects
// faults one after another at random moments: kill -9 of a controller or an agent, which is then
// started again with the same arguments (as a supervisor such as systemd would), or SIGSTOP of
// one (a hang), SIGCONT a few seconds later.
//
// Each job's processes write what they did to the job's own output file: a line when a process
// begins and one when it ends, with the attempt, the node and the time. After the run every job
// is let finish and an auditor reads those files, the store's event log and its job table:
//   lost                 an acknowledged job that is not in the store or never ended
//   run twice            a process of one attempt run twice on a node, an attempt run that the
//                        store never started, or an earlier attempt run that the store never
//                        requeued (a requeue after a node failure reruns a job: counted apart)
//   double allocations   a node given to two jobs at once in the log (on shared nodes: a core or
//                        GPU, or more memory than the node has), or two jobs' processes running
//                        on one node (on shared nodes: one CPU) at the same time by their own
//                        clocks
//   completed unrun      a job the store says completed whose last attempt did not run everywhere
// and, for each fault, the time to recover: from the fault until the controllers answer and every
// node is up with a heartbeat from after the fault ended.
//
//   ChaosOptions options{.trellis_binary = "/usr/bin/trellis", .dir = "/tmp/chaos", .seconds =
//   1800}; Result<ChaosResult> r = run_chaos(options);   // r->clean()
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bench/event_log_audit.h"
#include "core/result.h"
#include "store/state_store.h"

namespace trellis::bench {

struct ChaosOptions {
  std::string trellis_binary;  // the `trellis` CLI; trellisd and trellis-agent are beside it
  std::string dir;             // the cluster's directory, kept afterwards (logs, outputs, faults)
  std::string machine = "torus:4x4x4";
  int agents = 4;
  int controllers = 1;               // more than one needs a PostgreSQL store_url
  std::string allocation = "lease";  // with several controllers: "lease" or "concurrent"
  std::string store_url;             // "" = SQLite in dir
  double seconds = 60;               // how long jobs are submitted and faults injected
  double fault_every = 6;            // mean seconds between one fault's recovery and the next fault
  double pause_fraction = 0.2;       // of faults: SIGSTOP/SIGCONT instead of kill -9 and restart
  double restart_within = 2;         // a killed daemon starts again after U(0, this) seconds
  double pause_within = 4;           // a paused daemon resumes after U(0.2, this) seconds
  double submit_rate = 8;            // jobs per second, from two client threads
  double cancel_fraction = 0.05;     // of client actions: cancel a random earlier job
  // A node type ("cores=4,mem=2G"): every node is of it and shared (cluster up --shared-nodes),
  // jobs ask 1 or 2 cores and some memory, and the audit checks cores and memory, not nodes.
  std::string shared_nodes;
  uint64_t seed = 1;
  std::function<void(const std::string&)> progress;  // a line every half minute or so, if set
};

// One fault and how long the cluster took to recover from it.
struct ChaosFault {
  double at = 0;          // seconds since the run began
  std::string action;     // "kill -9" or "SIGSTOP"
  std::string target;     // "trellisd", "trellisd-1", "agent-2", ...
  double down_for = 0;    // seconds until restarted or resumed
  double recovered = -1;  // seconds from the fault to recovery; -1: not within two minutes
};

struct ChaosResult {
  double seconds = 0;
  std::vector<ChaosFault> faults;
  int64_t kills = 0, pauses = 0;

  int64_t submitted = 0, acknowledged = 0;
  int64_t stored_unacknowledged = 0;  // submissions whose answer was lost but that were stored
  int64_t cancels = 0;                // cancel requests answered
  std::map<std::string, int64_t> final_states;  // "CD" -> count, ...

  EventLogAudit log;
  int64_t lost = 0;
  int64_t run_twice = 0;
  int64_t process_overlaps = 0;  // two jobs' processes on one node at once
  int64_t completed_unrun = 0;
  int64_t reruns_after_requeue = 0;
  std::vector<std::string> problems;  // the first few

  int64_t double_allocations() const { return log.double_allocations + process_overlaps; }
  double worst_recovery() const;
  bool clean() const {
    return lost == 0 && run_twice == 0 && double_allocations() == 0 && completed_unrun == 0 &&
           log.clean();
  }
};

// The auditor alone, which run_chaos() calls after the run: the store's log and jobs against the
// jobs' output files (OUT_DIR/JOB_ID, "B|E ATTEMPT NODE NANOSECONDS [CPUS]" lines: on shared
// nodes, the CPUs the job was given there), filling the audit's fields of `result`;
// `inventories` as audit_event_log() takes them. An error only when the store cannot be read.
Status audit_chaos_run(StateStore& store, const std::set<JobId>& acknowledged,
                       const std::string& out_dir, ChaosResult& result,
                       const std::vector<NodeInventory>& inventories = {});

// Brings the cluster up in options.dir, runs, audits, and brings it down. An error when the
// cluster cannot be started or its store read; the audit's findings are in the result.
Result<ChaosResult> run_chaos(const ChaosOptions& options);

}  // namespace trellis::bench
