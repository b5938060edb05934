// The dashboard's JSON API, built straight from the store (never from a controller), so it
// answers while every controller is down. Each function is one endpoint of `trellis web`
// (web/dashboard_server.h); they are apart from HTTP so tests can check them on a store.
//
//   GET /api/nodes                  nodes_json: the machine, every node's state and job, the
//                                   largest free box (mesh/torus)
//   GET /api/jobs?state=PD,R&user=  jobs_json: jobs, newest first, filtered
//   GET /api/jobs/ID                job_json: one job, with its state history from the event log
//   GET /api/utilization?since=S    utilization_json: busy nodes and queue length over the last
//                                   S seconds ("all": since the log began), and the latest
//                                   runs of that window (a Gantt chart)
//
// Names of users and jobs are returned as stored: the page shows them as text, never as HTML.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/node_inventory.h"
#include "store/state_store.h"
#include "web/event_history.h"

namespace trellis::web {

// ?state= and ?user= of /api/jobs. States are letters or names, comma-separated ("PD,R").
struct JobFilter {
  std::vector<JobState> states;  // empty: any
  std::string user;              // empty: anyone
  int limit = 500;               // the newest this many
};

// Parses the query parameters of /api/jobs; an error names the bad value.
Result<JobFilter> parse_job_filter(const std::string& state, const std::string& user,
                                   const std::string& limit);

// `inventories` (by node id; empty: not known) add each node's "has" and "free" (cores,
// memory_mb, gpus: what no running job's grant holds; nothing of a node a job holds whole).
Result<nlohmann::json> nodes_json(StateStore& store, Seconds now,
                                  const std::vector<NodeInventory>& inventories = {});
Result<nlohmann::json> jobs_json(StateStore& store, const JobFilter& filter, Seconds now);
// Not found for an id the store does not have.
Result<nlohmann::json> job_json(StateStore& store, const EventHistory& history, JobId id,
                                Seconds now);
// `history` must have caught up with the store. At most `max_runs` runs, the latest; "runs_total"
// counts them all.
nlohmann::json utilization_json(const EventHistory& history, int node_count, Seconds since,
                                Seconds now, size_t max_runs = 200);

}  // namespace trellis::web
