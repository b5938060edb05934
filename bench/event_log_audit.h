// The auditor of a store's event log: replays every event in order and checks what must hold of
// any run, however many controllers wrote it and whatever failed meanwhile: the log has no gaps,
// a node is never given to a job while another holds it, a job starts only from the queue and
// with the next attempt number, and it ends or is requeued only while it runs. On shared nodes
// (a start that names its grants, core/node_grant.h) the node may hold several jobs, but no core
// or GPU is given to two of them at once, no job takes a node whole while another holds part of
// it, and with the nodes' inventories given, no node's memory is given out beyond what it has.
//
// Used by the many-controller stream (bench/controller_stream.h) and the chaos run
// (bench/chaos.h); both add what only they can see (fake agents' records, jobs' own output).
//
//   Result<EventLogAudit> audit = audit_event_log(store);
//   if (audit->clean()) ...
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/node_inventory.h"
#include "core/result.h"
#include "store/state_store.h"

namespace trellis::bench {

struct EventLogAudit {
  int64_t events = 0;
  int64_t starts = 0;  // start events: scheduling decisions
  int64_t double_allocations = 0;
  int64_t started_twice = 0;  // a start while not pending, or an attempt number out of order
  int64_t bad_transitions = 0;
  int64_t log_gaps = 0;
  std::map<JobId, std::set<int>> requeued_attempts;  // attempts that ended in a requeue
  std::map<JobId, int> last_attempt;                 // the attempt of each job's last start
  std::vector<std::string> problems;                 // the first few, for messages

  bool clean() const {
    return double_allocations == 0 && started_twice == 0 && bad_transitions == 0 && log_gaps == 0;
  }
  // Keeps the first few problems only.
  void problem(std::string what);
};

// Reads the whole log (in batches) and replays it. `inventories` (by node id; empty: not known)
// are what each node has, for the memory check and for ids beyond a node's cores or GPUs.
Result<EventLogAudit> audit_event_log(StateStore& store,
                                      const std::vector<NodeInventory>& inventories = {});

}  // namespace trellis::bench
