#include <signal.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/hostlist.h"
#include "daemon/controller.h"
#include "daemon/job_spec.h"

// Node membership and liveness: agents registering and heartbeating, drains, nodes found down,
// and the jobs a failed node takes with it.

namespace trellis {

Result<v1::RegisterReply> Controller::register_agent(const v1::RegisterRequest& request,
                                                     const Caller& caller, Seconds now) {
  if (!is_agent(caller))
    return fail(Error::Code::kPermissionDenied, "permission denied: agents run as the daemon user");
  if (request.address().empty()) return fail("address: an agent must give its address");
  v1::RegisterReply reply;
  reply.set_heartbeat_interval_ms(static_cast<int>(std::min<long>(
      std::lround(config_.controller.heartbeat_interval * 1000), std::numeric_limits<int>::max())));
  std::vector<std::string> known;
  std::vector<RunningTask> running;
  {
    std::lock_guard lock(mutex_);
    for (const std::string& name : request.nodes()) {
      Result<NodeId> id = node_id(name);
      if (!id) {
        reply.add_unknown_nodes(name);
        continue;
      }
      agent_of_[*id] = request.address();
      known.push_back(name);
    }
    for (const v1::TaskStatus& task : request.tasks())
      if (task.running() && node_id(task.node()))
        running.push_back({task.job_id(), task.attempt(), task.node()});
  }
  // Processes of an attempt that ended while the agent was away (its nodes were declared down
  // and the job requeued or failed; the kill could not reach it) are killed now, and the store
  // keeps their nodes down: the agent registers again at its next heartbeat, and a node comes
  // back only once nothing of an ended attempt runs there, so no job is given a node where
  // another job's process still runs. The store decides this in one transaction, against the job
  // table as every controller last wrote it.
  Result<std::vector<RunningTask>> stale =
      store_.register_nodes(known, request.address(), running, now);
  if (!stale) return stale.error();
  {
    std::lock_guard lock(mutex_);
    std::set<std::string> held_down;
    for (const RunningTask& task : *stale) {
      send_signal(task.job, task.attempt, {*node_id(task.node)}, SIGKILL);
      held_down.insert(task.node);
    }
    // A stopping job whose signal was lost is signalled again.
    for (const RunningTask& task : running) {
      if (held_down.count(task.node)) continue;
      Result<StoredJob> job = store_.job(task.job);
      if (job && job->attempt == task.attempt && job->stop != StopCause::kNone)
        send_signal(job->id, job->attempt, {*node_id(task.node)}, 0);
    }
    std::vector<std::string> up;
    for (const std::string& name : known)
      if (!held_down.count(name)) up.push_back(name);
    mark_heard(up, now);
  }
  // Tasks the agent saw end while no controller heard it are exits like any other.
  v1::ExitRequest ended;
  for (const v1::TaskStatus& task : request.tasks())
    if (!task.running()) *ended.add_tasks() = task;
  if (ended.tasks_size() > 0)
    if (Status ok = report_exits(ended, caller, now); !ok) return ok.error();
  return reply;
}

Status Controller::heartbeat(const v1::HeartbeatRequest& request, const Caller& caller,
                             Seconds now) {
  if (!is_agent(caller))
    return fail(Error::Code::kPermissionDenied, "permission denied: agents run as the daemon user");
  std::vector<std::string> names;
  {
    std::lock_guard lock(mutex_);
    for (const std::string& name : request.nodes()) {
      Result<NodeId> id = node_id(name);
      if (!id) return fail(Error::Code::kNotFound, "nodes: '" + name + "' is not in this cluster");
      if (agent_of_[*id] != request.address())
        return fail(Error::Code::kNotFound, "node " + name + " is not registered to " +
                                                request.address() + ": register first");
      // A node comes back from down only through a registration, which lists what it runs.
      if (!up_[*id])
        return fail(Error::Code::kNotFound,
                    "node " + name + " is down: register again with the tasks it runs");
      names.push_back(name);
    }
  }
  return hear_from(names, request.address(), now);
}

Status Controller::hear_from(const std::vector<std::string>& names, const std::string& address,
                             Seconds now) {
  std::lock_guard lock(mutex_);
  // Every heartbeat is written, since the scheduler may be another controller; one of nodes up
  // already only records its time, which changes no version. The store refuses a heartbeat for a
  // node it has down even when this controller has not yet read that it went down.
  if (Status ok = store_.nodes_seen(names, address, now); !ok) return ok;
  mark_heard(names, now);
  return Ok{};
}

void Controller::mark_heard(const std::vector<std::string>& names, Seconds now) {
  for (const std::string& name : names) {
    NodeId id = *node_id(name);
    last_seen_[id] = now;
    if (up_[id]) continue;
    up_[id] = true;
    if (!drained_[id] && tracking()) (void)core_->node_up(id, now);
    pass_wanted_ = true;
  }
}

Result<v1::DrainReply> Controller::drain(const v1::DrainRequest& request, const Caller& caller,
                                         Seconds now) {
  if (!is_admin(caller))
    return fail(Error::Code::kPermissionDenied,
                "permission denied: only administrators drain nodes");
  std::lock_guard lock(mutex_);
  Result<NodeSet> nodes = parse_hostlist(request.nodelist(), machine_.node_count(), kNodePrefix);
  if (!nodes) return fail("nodelist: " + nodes.error().message);
  std::vector<NodeId> ids = nodes->to_vector();
  if (ids.empty()) return fail("nodelist: no nodes given");
  bool drain = !request.resume();
  if (Status ok = store_.set_drained(ids, drain, request.reason(), now); !ok) return ok.error();
  v1::DrainReply reply;
  for (NodeId id : ids) {
    drained_[id] = drain;
    if (!tracking()) {
    } else if (drain) {
      (void)core_->node_down(id, now);
    } else if (up_[id]) {
      (void)core_->node_up(id, now);
    }
    reply.add_changed(node_name(id));
  }
  pass_wanted_ = true;
  return reply;
}

Status Controller::tick(Seconds now) {
  std::lock_guard lock(mutex_);
  // A controller that did not run for a while (stopped, swapped out, its host stalled) heard no
  // heartbeat meanwhile through no fault of the nodes: the time it was away beyond one heartbeat
  // interval does not count against them, or every node would be declared down at once.
  const Seconds away = now - last_tick_ - config_.controller.heartbeat_interval;
  if (last_tick_ > 0 && away > 0)
    for (Seconds& seen : last_seen_) seen = std::min(now, seen + away);
  last_tick_ = now;
  if (Status ok = sync(now); !ok) return ok;
  if (!scheduler_) return Ok{};  // limits and heartbeats are the scheduler's to watch
  // Time limits: the job is signalled once; it ends as TO when its processes are gone.
  for (auto& [id, live] : running_) {
    // A frozen job's clock stands still (limit_at moves on when it thaws).
    if (live.stop != StopCause::kNone || live.frozen || now < live.limit_at) continue;
    Result<JobState> after =
        store_.stop_job(id, live.attempt, StopCause::kTimeout, "time limit reached", now);
    if (!after) return after.error();
    if (*after != JobState::kCompleting) continue;  // ended or cancelled meanwhile
    live.stop = StopCause::kTimeout;
    send_signal(id, live.attempt, live.nodes, 0);
  }
  // Missed heartbeats. A node silent here may be heartbeating to another controller: the store's
  // time is read before it is declared down.
  const Seconds window =
      config_.controller.heartbeat_interval * config_.controller.heartbeat_misses;
  auto silent = [&] {
    std::vector<NodeId> lost;
    for (NodeId id = 0; id < machine_.node_count(); ++id)
      if (up_[id] && now - last_seen_[id] > window) lost.push_back(id);
    return lost;
  };
  if (silent().empty()) return Ok{};
  Result<std::vector<StoredNode>> stored = store_.list_nodes();
  if (!stored) return stored.error();
  for (const StoredNode& node : *stored) {
    if (node.id < 0 || node.id >= machine_.node_count()) continue;
    last_seen_[node.id] = std::max(last_seen_[node.id], node.last_heartbeat);
    if (!node.agent.empty()) agent_of_[node.id] = node.agent;
  }
  std::vector<NodeId> lost = silent();
  if (lost.empty()) return Ok{};
  if (Status ok = store_.nodes_down(lost, "not responding", now); !ok) return ok;
  for (NodeId id : lost) {
    up_[id] = false;
    if (tracking()) (void)core_->node_down(id, now);
  }
  return requeue_or_fail_jobs_on(lost, now);
}

Status Controller::requeue_or_fail_jobs_on(const std::vector<NodeId>& nodes, Seconds now) {
  std::set<NodeId> failed(nodes.begin(), nodes.end());
  std::vector<std::pair<JobId, LiveJob>> hit;
  for (const auto& [id, live] : running_)
    if (std::any_of(live.nodes.begin(), live.nodes.end(),
                    [&](NodeId n) { return failed.count(n) > 0; }))
      hit.emplace_back(id, live);
  const bool requeue = config_.controller.node_failure == NodeFailurePolicy::kRequeue;
  for (const auto& [id, live] : hit) {
    // The processes on surviving nodes are killed; the dead node's cannot report, so the job's
    // attempt ends now (a late report of this attempt is ignored).
    send_signal(id, live.attempt, live.nodes, SIGKILL);
    if (Status ok = finish(id, live.attempt, requeue ? JobState::kPending : JobState::kNodeFail,
                           "a node failed", now);
        !ok)
      return ok;
  }
  pass_wanted_ = true;
  return Ok{};
}

Result<v1::ListNodesReply> Controller::list_nodes(const v1::ListNodesRequest& request) {
  const int n = machine_.node_count();
  NodeSet wanted = NodeSet::all(n);
  if (!request.nodelist().empty()) {
    Result<NodeSet> parsed = parse_hostlist(request.nodelist(), n, "n");
    if (!parsed) return fail("nodelist: " + parsed.error().message);
    wanted = *parsed;
  }
  Result<std::vector<StoredNode>> nodes = store_.list_nodes();
  if (!nodes) return nodes.error();
  v1::ListNodesReply reply;
  reply.set_machine(machine_.spec());
  for (const StoredNode& node : *nodes) {
    if (node.id < 0 || node.id >= n || !wanted.test(node.id)) continue;
    *reply.add_nodes() = node_info(node, machine_);
  }
  return reply;
}

}  // namespace trellis
