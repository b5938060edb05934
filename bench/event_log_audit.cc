#include "bench/event_log_audit.h"

#include <sstream>

#include "core/id_ranges.h"

namespace trellis::bench {

void EventLogAudit::problem(std::string what) {
  if (problems.size() < 10) problems.push_back(std::move(what));
}

Result<EventLogAudit> audit_event_log(StateStore& store) {
  EventLogAudit audit;
  std::map<NodeId, JobId> holder;
  std::map<JobId, std::vector<NodeId>> held;
  std::map<JobId, std::string> state;  // PD R CG final
  int64_t after = 0;
  for (;;) {
    Result<std::vector<StoredEvent>> batch = store.events(after, 20000);
    if (!batch) return fail(batch.error().code, "reading the log: " + batch.error().message);
    if (batch->empty()) break;
    for (const StoredEvent& e : *batch) {
      ++audit.events;
      if (e.seq != after + 1) ++audit.log_gaps;
      after = e.seq;
      std::string id = "job " + std::to_string(e.job);
      if (e.kind == "submit") {
        state[e.job] = "PD";
      } else if (e.kind == "start") {
        ++audit.starts;
        // "attempt A on K nodes: i,j,k"
        int attempt = std::stoi(e.detail.substr(8));
        if (state[e.job] != "PD") {
          ++audit.started_twice;
          audit.problem(id + " started while " + state[e.job]);
        }
        if (attempt != audit.last_attempt[e.job] + 1) {
          ++audit.started_twice;
          audit.problem(id + " started attempt " + std::to_string(attempt) + " after attempt " +
                        std::to_string(audit.last_attempt[e.job]));
        }
        audit.last_attempt[e.job] = attempt;
        state[e.job] = "R";
        // The nodes as id ranges ("0-3,7"; logs before schema 4 listed every id, "0,1,2,3,7").
        Result<std::vector<int>> ids = parse_id_ranges(e.detail.substr(e.detail.find(": ") + 2));
        if (!ids) {
          ++audit.bad_transitions;
          audit.problem(id + "'s start names its nodes badly: " + ids.error().message);
          continue;
        }
        for (NodeId node : *ids) {
          if (auto h = holder.find(node); h != holder.end()) {
            ++audit.double_allocations;
            audit.problem("node " + std::to_string(node) + " given to " + id + " while job " +
                          std::to_string(h->second) + " holds it");
          }
          holder[node] = e.job;
          held[e.job].push_back(node);
        }
      } else if (e.kind == "end" || e.kind == "requeue") {
        if (state[e.job] != "R" && state[e.job] != "CG") {
          ++audit.bad_transitions;
          audit.problem(id + " ended while " + state[e.job]);
        }
        for (NodeId node : held[e.job]) holder.erase(node);
        held.erase(e.job);
        if (e.kind == "requeue") audit.requeued_attempts[e.job].insert(audit.last_attempt[e.job]);
        state[e.job] = e.kind == "end" ? "final" : "PD";
      } else if (e.kind == "cancel") {
        if (e.detail.starts_with("PENDING")) {
          if (state[e.job] != "PD") ++audit.bad_transitions;
          state[e.job] = "final";
        } else {
          if (state[e.job] != "R") ++audit.bad_transitions;
          state[e.job] = "CG";
        }
      }
    }
  }
  return audit;
}

}  // namespace trellis::bench
