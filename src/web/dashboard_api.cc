#include "web/dashboard_api.h"

#include <map>

#include <algorithm>
#include <charconv>
#include <set>

#include "alloc/metrics.h"
#include "core/hostlist.h"
#include "topology/machine.h"

namespace trellis::web {
namespace {

using nlohmann::json;

// Where a node is drawn: its coordinates on a mesh/torus, its leaf switch on a fat tree.
json node_place(const Machine& machine, NodeId id) {
  if (const Torus* torus = machine.torus()) {
    Coords c = torus->coords(id);
    json coords = json::array();
    for (int axis = 0; axis < torus->dims(); ++axis) coords.push_back(c[axis]);
    return coords;
  }
  if (const FatTree* tree = machine.fat_tree(); tree && tree->levels() > 0) {
    return tree->leaf_switch(id);
  }
  return nullptr;
}

json machine_json(const Machine& machine) {
  json out = {{"spec", machine.spec()}, {"nodes", machine.node_count()}};
  if (const Torus* torus = machine.torus()) {
    out["kind"] = "torus";
    out["extents"] = torus->extents();
    json wraps = json::array();
    for (int axis = 0; axis < torus->dims(); ++axis) wraps.push_back(torus->wraps(axis));
    out["wraps"] = wraps;
  } else if (const FatTree* tree = machine.fat_tree()) {
    out["kind"] = "fattree";
    out["fanouts"] = tree->fanouts();
    json switches = json::array();  // per level, from the leaves (level 1) up
    for (int level = 1; level <= tree->levels(); ++level)
      switches.push_back(tree->switches_at(level));
    out["switches"] = switches;
    out["leaf_size"] = tree->levels() > 0 ? tree->nodes_under(1) : machine.node_count();
  } else {
    out["kind"] = "flat";
  }
  return out;
}

std::string request_text(const Request& request) {
  if (request.has_shape()) {
    return format_shape(request.shape) + (request.rotate ? "" : " (no rotation)") + ", " +
           std::string(to_string(request.mode));
  }
  return std::to_string(request.asked_nodes()) + " nodes, " + std::string(to_string(request.mode));
}

json job_summary(const StoredJob& job, int node_count) {
  json out = {{"id", job.id},
              {"name", job.name},
              {"user", job.user},
              {"uid", job.uid},
              {"state", std::string(state_letter(job.state))},
              {"state_name", std::string(state_name(job.state))},
              {"reason", job.reason},
              {"request", request_text(job.request)},
              {"nodes_requested", job.request.asked_nodes()},
              {"nodes", job.nodes},
              {"nodelist", job.nodes.empty() ? std::string()
                                             : format_hostlist(NodeSet::of(node_count, job.nodes))},
              {"submit_time", job.submit_time},
              {"start_time", job.start_time},
              {"end_time", job.end_time},
              {"expected_start", job.expected_start},
              {"time_limit", job.time_limit},
              {"attempt", job.attempt},
              {"exit_code", job.exit_code},
              {"signal", job.signal}};
  if (!job.box_extents.empty()) out["box"] = format_shape(job.box_extents);
  return out;
}

Result<int> node_count_of(StateStore& store) {
  Result<std::string> spec = store.machine_spec();
  if (!spec) return spec.error();
  Result<Machine> machine = Machine::parse(*spec);
  if (!machine) return machine.error();
  return machine->node_count();
}

}  // namespace

Result<JobFilter> parse_job_filter(const std::string& state, const std::string& user,
                                   const std::string& limit) {
  JobFilter filter;
  size_t start = 0;
  while (start < state.size()) {
    size_t comma = state.find(',', start);
    std::string one =
        state.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!one.empty()) {
      Result<JobState> parsed = parse_job_state(one);
      if (!parsed) return fail("state: " + parsed.error().message);
      filter.states.push_back(*parsed);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  filter.user = user;
  if (!limit.empty()) {
    auto [end, ec] = std::from_chars(limit.data(), limit.data() + limit.size(), filter.limit);
    if (ec != std::errc() || end != limit.data() + limit.size() || filter.limit < 1) {
      return fail("limit: expected a positive whole number, got '" + limit + "'");
    }
  }
  return filter;
}

Result<json> nodes_json(StateStore& store, Seconds now,
                        const std::vector<NodeInventory>& inventories) {
  Result<std::string> spec = store.machine_spec();
  if (!spec) return spec.error();
  Result<Machine> machine = Machine::parse(*spec);
  if (!machine) return machine.error();
  Result<std::vector<StoredNode>> nodes = store.list_nodes();
  if (!nodes) return nodes.error();
  JobQuery holding;
  holding.states = {JobState::kRunning, JobState::kSuspended, JobState::kCompleting};
  Result<std::vector<StoredJob>> jobs = store.list_jobs(holding);
  if (!jobs) return jobs.error();

  const int n = machine->node_count();
  NodeSet free(n);
  // What the running jobs hold of each node: their grants on shared nodes, else all of it.
  struct Held {
    int64_t cores = 0, memory_mb = 0, gpus = 0;
    bool whole = false;
  };
  std::map<NodeId, Held> held;
  for (const StoredJob& job : *jobs) {
    std::map<NodeId, const NodeGrant*> grant_of;
    for (const NodeGrant& g : job.grants) grant_of[g.node] = &g;
    for (NodeId node : job.nodes) {
      Held& h = held[node];
      if (auto g = grant_of.find(node); g != grant_of.end()) {
        h.cores += static_cast<int64_t>(g->second->cores.size());
        h.memory_mb += g->second->memory_mb;
        h.gpus += static_cast<int64_t>(g->second->gpus.size());
      } else {
        h.whole = true;
      }
    }
  }
  json node_list = json::array();
  int idle = 0, allocated = 0, down = 0, drained = 0;
  for (const StoredNode& node : *nodes) {
    if (node.id < 0 || node.id >= n) continue;
    std::string state;
    if (!node.jobs.empty()) {
      state = "allocated";
      ++allocated;
    } else if (node.drained) {
      state = "drained";
      ++drained;
    } else if (!node.up) {
      state = "down";
      ++down;
    } else {
      state = "idle";
      ++idle;
      free.set(node.id);
    }
    json row = {{"id", node.id},           {"name", node.name},
                {"state", state},          {"up", node.up},
                {"drained", node.drained}, {"jobs", node.jobs},
                {"reason", node.reason},   {"place", node_place(*machine, node.id)}};
    // With the node's inventory: what it has and what no job holds of it.
    if (static_cast<size_t>(node.id) < inventories.size()) {
      const NodeInventory& has = inventories[node.id];
      const Held h = held.count(node.id) ? held[node.id] : Held{};
      const int64_t gpus = static_cast<int64_t>(has.gpus.size());
      row["has"] = {{"cores", has.cores()}, {"memory_mb", has.memory_mb}, {"gpus", gpus}};
      row["free"] = h.whole ? json{{"cores", 0}, {"memory_mb", 0}, {"gpus", 0}}
                            : json{{"cores", std::max<int64_t>(0, has.cores() - h.cores)},
                                   {"memory_mb", std::max<int64_t>(0, has.memory_mb - h.memory_mb)},
                                   {"gpus", std::max<int64_t>(0, gpus - h.gpus)}};
    }
    node_list.push_back(std::move(row));
  }
  json job_map = json::object();
  for (const StoredJob& job : *jobs) job_map[std::to_string(job.id)] = job_summary(job, n);

  json largest = nullptr;
  if (const Torus* torus = machine->torus(); torus && free.count() > 0) {
    if (std::optional<Box> box = largest_free_box(*torus, free)) {
      NodeSet covered = box->nodes(*torus);
      std::vector<NodeId> ids;
      for (NodeId id = 0; id < n; ++id)
        if (covered.test(id)) ids.push_back(id);
      largest = {{"shape", format_shape(box->extents)},
                 {"volume", box->volume()},
                 {"describe", box->describe(*torus)},
                 {"nodes", ids}};
    }
  }
  return json{
      {"time", now},
      {"machine", machine_json(*machine)},
      {"counts", {{"idle", idle}, {"allocated", allocated}, {"down", down}, {"drained", drained}}},
      {"nodes", node_list},
      {"jobs", job_map},
      {"largest_free_box", largest}};
}

Result<json> jobs_json(StateStore& store, const JobFilter& filter, Seconds now) {
  Result<int> n = node_count_of(store);
  if (!n) return n.error();
  JobQuery query;
  query.states = filter.states;
  Result<std::vector<StoredJob>> jobs = store.list_jobs(query);
  if (!jobs) return jobs.error();
  std::vector<const StoredJob*> chosen;
  for (const StoredJob& job : *jobs) {
    if (!filter.user.empty() && job.user != filter.user) continue;
    chosen.push_back(&job);
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const StoredJob* a, const StoredJob* b) { return a->id > b->id; });
  json list = json::array();
  for (size_t i = 0; i < chosen.size() && static_cast<int>(i) < filter.limit; ++i) {
    list.push_back(job_summary(*chosen[i], *n));
  }
  return json{{"time", now}, {"total", chosen.size()}, {"jobs", list}};
}

Result<json> job_json(StateStore& store, const EventHistory& history, JobId id, Seconds now) {
  Result<int> n = node_count_of(store);
  if (!n) return n.error();
  Result<StoredJob> job = store.job(id);
  if (!job) return job.error();
  json out = job_summary(*job, *n);
  out["time"] = now;
  out["argv"] = job->argv;
  out["cwd"] = job->cwd;
  std::string output = job->output;
  for (size_t at = output.find("%j"); at != std::string::npos; at = output.find("%j", at)) {
    output.replace(at, 2, std::to_string(job->id));
  }
  out["output"] = output;
  json events = json::array();
  for (const StoredEvent& event : history.job_events(id)) {
    events.push_back(
        {{"seq", event.seq}, {"time", event.time}, {"kind", event.kind}, {"detail", event.detail}});
  }
  out["history"] = events;
  return out;
}

json utilization_json(const EventHistory& history, int node_count, Seconds since, Seconds now,
                      size_t max_runs) {
  constexpr int kPoints = 240;
  json time = json::array(), busy = json::array(), queued = json::array();
  for (const HistorySample& s : history.samples(since, now, kPoints)) {
    time.push_back(s.time);
    busy.push_back(s.busy_nodes);
    queued.push_back(s.queued_jobs);
  }
  json runs = json::array();
  std::vector<JobRun> window = history.runs_since(since);
  size_t first = window.size() > max_runs ? window.size() - max_runs : 0;
  for (size_t i = first; i < window.size(); ++i) {
    const JobRun& run = window[i];
    runs.push_back({{"job", run.job},
                    {"attempt", run.attempt},
                    {"nodes", run.nodes},
                    {"start", run.start},
                    {"end", run.end}});
  }
  return json{{"time", now},
              {"since", since},
              {"node_count", node_count},
              {"samples", {{"time", time}, {"busy_nodes", busy}, {"queued_jobs", queued}}},
              {"runs", runs},
              {"runs_total", window.size()}};
}

}  // namespace trellis::web
