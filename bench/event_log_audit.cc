#include "bench/event_log_audit.h"

#include <algorithm>
#include <sstream>

#include "core/id_ranges.h"
#include "core/node_grant.h"

namespace trellis::bench {

void EventLogAudit::problem(std::string what) {
  if (problems.size() < 10) problems.push_back(std::move(what));
}

Result<EventLogAudit> audit_event_log(StateStore& store,
                                      const std::vector<NodeInventory>& inventories) {
  EventLogAudit audit;
  // Who holds each node: one job whole, or jobs each with its grant.
  struct Holders {
    bool whole = false;
    std::map<JobId, NodeGrant> jobs;
  };
  std::map<NodeId, Holders> holders;
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
        // The nodes as id ranges ("0-3,7"; logs before schema 4 listed every id, "0,1,2,3,7"),
        // then, for a start that shares its nodes, " | grants: " and what it holds on each.
        const size_t nodes_at = e.detail.find(": ") + 2;
        const size_t grants_at = e.detail.find(" | grants: ");
        Result<std::vector<int>> ids = parse_id_ranges(e.detail.substr(
            nodes_at, grants_at == std::string::npos ? std::string::npos : grants_at - nodes_at));
        if (!ids) {
          ++audit.bad_transitions;
          audit.problem(id + "'s start names its nodes badly: " + ids.error().message);
          continue;
        }
        std::map<NodeId, NodeGrant> grant_of;
        if (grants_at != std::string::npos) {
          Result<std::vector<NodeGrant>> grants = decode_grants(e.detail.substr(grants_at + 11));
          if (!grants) {
            ++audit.bad_transitions;
            audit.problem(id + "'s start names its grants badly: " + grants.error().message);
            continue;
          }
          for (NodeGrant& g : *grants) grant_of[g.node] = std::move(g);
        }
        for (NodeId node : *ids) {
          Holders& h = holders[node];
          auto grant = grant_of.find(node);
          if (grant == grant_of.end()) {  // the node whole
            if (!h.jobs.empty()) {
              ++audit.double_allocations;
              audit.problem("node " + std::to_string(node) + " given whole to " + id +
                            " while job " + std::to_string(h.jobs.begin()->first) + " holds " +
                            (h.whole ? "it" : "part of it"));
            }
            h.whole = true;
            h.jobs[e.job] = NodeGrant{};
          } else {
            const NodeGrant& g = grant->second;
            const NodeInventory* has = node >= 0 && static_cast<size_t>(node) < inventories.size()
                                           ? &inventories[node]
                                           : nullptr;
            auto taken = [&](std::string what) {
              ++audit.double_allocations;
              audit.problem("node " + std::to_string(node) + ": " + id + " was given " + what);
            };
            if (h.whole)
              taken("a share while job " + std::to_string(h.jobs.begin()->first) +
                    " holds it whole");
            int64_t memory = g.memory_mb;
            for (const auto& [other, held] : h.jobs) {
              memory += held.memory_mb;
              for (int core : g.cores)
                if (std::binary_search(held.cores.begin(), held.cores.end(), core))
                  taken("core " + std::to_string(core) + " while job " + std::to_string(other) +
                        " holds it");
              for (int gpu : g.gpus)
                if (std::binary_search(held.gpus.begin(), held.gpus.end(), gpu))
                  taken("GPU " + std::to_string(gpu) + " while job " + std::to_string(other) +
                        " holds it");
            }
            if (has) {
              for (int core : g.cores)
                if (core < 0 || core >= has->cores())
                  taken("core " + std::to_string(core) + ", which it does not have");
              for (int gpu : g.gpus)
                if (gpu < 0 || gpu >= static_cast<int>(has->gpus.size()))
                  taken("GPU " + std::to_string(gpu) + ", which it does not have");
              if (has->memory_mb > 0 && memory > has->memory_mb)
                taken(std::to_string(g.memory_mb) + " MiB, making " + std::to_string(memory) +
                      " MiB given of its " + std::to_string(has->memory_mb));
            }
            h.jobs[e.job] = g;
          }
          held[e.job].push_back(node);
        }
      } else if (e.kind == "end" || e.kind == "requeue") {
        if (state[e.job] != "R" && state[e.job] != "CG") {
          ++audit.bad_transitions;
          audit.problem(id + " ended while " + state[e.job]);
        }
        for (NodeId node : held[e.job]) {
          Holders& h = holders[node];
          h.jobs.erase(e.job);
          if (h.jobs.empty()) h.whole = false;
        }
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
