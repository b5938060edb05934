#include <signal.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/hostlist.h"
#include "daemon/controller.h"
#include "daemon/job_spec.h"
#include "daemon/log.h"

// Node membership and liveness: agents registering, the liveness pings' verdicts (unresponsive,
// down), drains, nodes found down and the jobs a failed node takes with it (requeued, held after
// too many node failures, or failed), and nodes drained for failing jobs repeatedly.

namespace trellis {

Result<v1::RegisterReply> Controller::register_agent(const v1::RegisterRequest& request,
                                                     const Caller& caller, Seconds now) {
  if (!is_agent(caller))
    return fail(Error::Code::kPermissionDenied, "permission denied: agents run as the daemon user");
  if (request.address().empty()) return fail("address: an agent must give its address");
  v1::RegisterReply reply;
  reply.set_ping_interval_ms(static_cast<int>(std::min<long>(
      std::lround(config_.controller.heartbeat_interval * 1000), std::numeric_limits<int>::max())));
  std::vector<std::string> known;
  std::vector<NodeId> known_ids;
  std::vector<RunningTask> running;
  {
    auto lock = lock_memory();
    for (const std::string& name : request.nodes()) {
      Result<NodeId> id = node_id(name);
      if (!id) {
        reply.add_unknown_nodes(name);
        continue;
      }
      agent_of_[*id] = request.address();
      known.push_back(name);
      known_ids.push_back(*id);
    }
    for (const v1::TaskStatus& task : request.tasks())
      if (task.running() && node_id(task.node()))
        running.push_back({task.job_id(), task.attempt(), task.node()});
  }
  // Processes of an attempt that ended while the agent was away (its nodes were declared down
  // and the job requeued or failed; the kill could not reach it) are killed now, and the store
  // keeps their nodes down: the agent is asked to register again, and a node comes back only
  // once nothing of an ended attempt runs there, so no job is given a node where another job's
  // process still runs. The store decides this in one transaction, against the job table as
  // every controller last wrote it.
  Result<std::vector<RunningTask>> stale =
      store_.register_nodes(known, request.address(), running, now);
  if (!stale) return stale.error();
  liveness_.add(request.address(), known_ids, now);
  {
    auto lock = lock_memory();
    std::set<std::string> held_down;
    // One kill per attempt, not per task (an agent may list a thousand).
    std::map<std::pair<JobId, int>, std::vector<NodeId>> stale_attempts;
    for (const RunningTask& task : *stale) {
      stale_attempts[{task.job, task.attempt}].push_back(*node_id(task.node));
      held_down.insert(task.node);
    }
    for (const auto& [attempt, nodes] : stale_attempts)
      send_signal(attempt.first, attempt.second, nodes, SIGKILL);
    if (!held_down.empty()) {
      log_line("agent " + request.address() + " still runs " + std::to_string(stale->size()) +
               " task(s) of ended attempts: killed; " + std::to_string(held_down.size()) +
               " node(s) stay down until it registers without them");
      liveness_.want_registration(request.address());
    }
    // A stopping job whose signal was lost is signalled again.
    std::set<JobId> listed;
    for (const RunningTask& task : running) {
      listed.insert(task.job);
      if (held_down.count(task.node)) continue;
      Result<StoredJob> job = store_.job(task.job);
      if (job && job->attempt == task.attempt && job->stop != StopCause::kNone)
        send_signal(job->id, job->attempt, {*node_id(task.node)}, 0);
    }
    // Reconciliation: a running job with nodes here of which the agent lists nothing may have
    // lost its launch (the agent restarted before starting its tasks): it is launched here again
    // (an agent ignores a launch it has had, and reports again the exits of one that ended).
    if (tracking()) {
      std::set<NodeId> mine(known_ids.begin(), known_ids.end());
      for (const auto& [id, live] : running_) {
        if (listed.count(id) || live.stop != StopCause::kNone) continue;
        if (std::none_of(live.nodes.begin(), live.nodes.end(),
                         [&](NodeId n) { return mine.count(n) > 0; }))
          continue;
        // The whole request (a batch job's with its script): the agent starts the tasks of the
        // nodes it serves. Not when the store has the job stopping or ended by now (a requeue
        // after a failed launch, taken on another thread).
        if (Result<StoredJob> job = store_.job(id); job && job->attempt == live.attempt &&
                                                    holds_nodes(job->state) &&
                                                    job->stop == StopCause::kNone)
          send_launch(*job, live.attempt, live.nodes, Launching::kAgain, request.address());
      }
    }
    std::vector<std::string> up;
    for (const std::string& name : known)
      if (!held_down.count(name)) up.push_back(name);
    mark_heard(up, now);
    if (Status ok = drain_short_nodes(request, known_ids, now); !ok) return ok.error();
  }
  // Tasks the agent saw end while no controller heard it are exits like any other.
  v1::ExitRequest ended;
  for (const v1::TaskStatus& task : request.tasks())
    if (!task.running()) *ended.add_tasks() = task;
  if (ended.tasks_size() > 0)
    if (Status ok = report_exits(ended, caller, now); !ok) return ok.error();
  return reply;
}

Status Controller::drain_short_nodes(const v1::RegisterRequest& request,
                                     const std::vector<NodeId>& nodes, Seconds now) {
  if (request.found_resources().empty() || node_types_.empty()) return Ok{};
  Result<NodeInventory> found = parse_node_inventory(request.found_resources());
  if (!found) {
    log_line("agent " + request.address() + " sent what its host has as '" +
             request.found_resources() + "', which does not read: " + found.error().message +
             "; its nodes are not checked");
    return Ok{};
  }
  for (NodeId n : nodes) {
    const NodeInventory* configured = node_types_.of(n);
    if (!configured) continue;
    // GPUs named by their device files (gpu_files) are taken at the config's word: hwloc sees
    // only the GPUs of drivers it knows.
    NodeInventory seen = *found;
    if (gpu_files_given(*configured)) seen.gpus = configured->gpus;
    std::string lacks = shortfall(*configured, seen);
    if (lacks.empty()) continue;
    const std::string reason =
        "hardware short of node type " + std::string(node_types_.type_name(n)) + ": " + lacks;
    if (drained_[n]) continue;  // drained already (by this check at an earlier registration)
    if (Status ok = store_.set_drained({n}, true, reason, now); !ok) return ok;
    log_line("node " + std::string(kNodePrefix) + std::to_string(n) + " (agent " +
             request.address() + ") drained: " + reason);
    const bool was_in_service = in_service(n);
    drained_[n] = true;
    if (was_in_service && tracking()) (void)core_->node_down(n, now);
  }
  pass_wanted_ = true;
  return Ok{};
}

void Controller::mark_heard(const std::vector<std::string>& names, Seconds now) {
  for (const std::string& name : names) {
    NodeId id = *node_id(name);
    const bool was_in_service = in_service(id);
    up_[id] = true;
    responsive_[id] = true;
    if (!was_in_service && in_service(id)) {
      if (tracking()) (void)core_->node_up(id, now);
      pass_wanted_ = true;
    }
  }
}

bool Controller::in_service(NodeId id) const {
  return up_[id] && !drained_[id] && responsive_[id];
}

Result<v1::DrainReply> Controller::drain(const v1::DrainRequest& request, const Caller& caller,
                                         Seconds now) {
  if (!is_admin(caller))
    return fail(Error::Code::kPermissionDenied,
                "permission denied: only administrators drain nodes");
  auto lock = lock_memory();
  Result<NodeSet> nodes = parse_hostlist(request.nodelist(), machine_.node_count(), kNodePrefix);
  if (!nodes) return fail("nodelist: " + nodes.error().message);
  std::vector<NodeId> ids = nodes->to_vector();
  if (ids.empty()) return fail("nodelist: no nodes given");
  bool drain = !request.resume();
  if (Status ok = store_.set_drained(ids, drain, request.reason(), now); !ok) return ok.error();
  v1::DrainReply reply;
  for (NodeId id : ids) {
    const bool was_in_service = in_service(id);
    drained_[id] = drain;
    if (!drain) node_failures_.erase(id);  // back in service: its count starts again
    if (tracking() && was_in_service != in_service(id))
      (void)(drain ? core_->node_down(id, now) : core_->node_up(id, now));
    reply.add_changed(node_name(id));
  }
  pass_wanted_ = true;
  return reply;
}

Status Controller::tick(Seconds now) {
  auto lock = lock_memory();
  if (Status ok = sync(now); !ok) return ok;
  if (!scheduler_) return Ok{};  // limits and liveness are the scheduler's to watch
  if (Status ok = adopt_orphans(now); !ok) return ok;
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
  // What the liveness pings found (daemon/liveness.h).
  for (const Liveness::Change& change : liveness_.take_changes()) {
    // Only the nodes the agent still serves (another may have registered some since).
    std::vector<NodeId> nodes;
    for (NodeId n : change.nodes)
      if (n >= 0 && n < machine_.node_count() && agent_of_[n] == change.agent) nodes.push_back(n);
    if (nodes.empty()) continue;
    const std::string where =
        format_hostlist(NodeSet::of(machine_.node_count(), nodes), kNodePrefix) + " (agent " +
        change.agent + ")";
    switch (change.kind) {
      case Liveness::Change::Kind::kUnresponsive:
        log_line("nodes " + where + " not responding (" + change.why +
                 "): no new job goes there until it answers; a direct probe follows");
        for (NodeId n : nodes) {
          const bool was_in_service = in_service(n);
          responsive_[n] = false;
          if (was_in_service && tracking()) (void)core_->node_down(n, now);
        }
        break;
      case Liveness::Change::Kind::kResponsive:
        log_line("nodes " + where + " answer again");
        for (NodeId n : nodes) {
          const bool was_in_service = in_service(n);
          responsive_[n] = true;
          if (!was_in_service && in_service(n) && tracking()) (void)core_->node_up(n, now);
        }
        pass_wanted_ = true;
        break;
      case Liveness::Change::Kind::kDown: {
        std::vector<NodeId> lost;
        for (NodeId n : nodes)
          if (up_[n]) lost.push_back(n);
        if (lost.empty()) break;
        const std::string why = "not responding: " + change.why;
        log_line("nodes " + where + " declared down: " + change.why);
        if (Status ok = store_.nodes_down(lost, why, now); !ok) return ok;
        for (NodeId n : lost) {
          const bool was_in_service = in_service(n);
          up_[n] = false;
          if (was_in_service && tracking()) (void)core_->node_down(n, now);
        }
        // Should it come back, it registers again (what it still runs decides its nodes).
        liveness_.want_registration(change.agent);
        if (Status ok = requeue_or_fail_jobs_on(lost, where + " " + why, now); !ok) return ok;
        break;
      }
    }
  }
  return Ok{};
}

Status Controller::requeue_or_fail_jobs_on(const std::vector<NodeId>& nodes, const std::string& why,
                                           Seconds now) {
  std::set<NodeId> failed(nodes.begin(), nodes.end());
  std::vector<std::pair<JobId, LiveJob>> hit;
  for (const auto& [id, live] : running_)
    if (std::any_of(live.nodes.begin(), live.nodes.end(),
                    [&](NodeId n) { return failed.count(n) > 0; }))
      hit.emplace_back(id, live);
  const bool requeue = config_.controller.node_failure == NodeFailurePolicy::kRequeue;
  std::vector<NodeId> to_drain;
  for (const auto& [id, live] : hit) {
    std::vector<NodeId> its_failed;
    for (NodeId n : live.nodes)
      if (failed.count(n)) its_failed.push_back(n);
    const std::string reason =
        "node" + std::string(its_failed.size() > 1 ? "s " : " ") +
        format_hostlist(NodeSet::of(machine_.node_count(), its_failed), kNodePrefix) +
        " failed: " + why;
    // The processes on surviving nodes are killed; the dead nodes' cannot report, so the job's
    // attempt ends now (a late report of this attempt is ignored).
    send_signal(id, live.attempt, live.nodes, SIGKILL);
    JobEnd end;
    end.job = id;
    end.attempt = live.attempt;
    end.state = requeue ? JobState::kPending : JobState::kNodeFail;
    end.reason = reason;
    if (requeue) {
      Result<StoredJob> row = store_.job(id);
      if (!row) return row.error();
      end.node_failure = true;
      // No requeue forever: after max_requeue of them the job is held.
      const int failures = row->node_failures + 1;
      if (failures >= config_.controller.max_requeue)
        end.hold = "requeued " + std::to_string(failures) +
                   " times after node failures ([controller] max_requeue = " +
                   std::to_string(config_.controller.max_requeue) + "): trellis release " +
                   std::to_string(id) + " lets it run again";
    }
    if (Status ok = finish(end, now); !ok) return ok;
    log_line("job " + std::to_string(id) + " attempt " + std::to_string(live.attempt) + " " +
             (!requeue           ? "failed (NF)"
              : end.hold.empty() ? "requeued"
                                 : "held") +
             ": " + reason + (end.hold.empty() ? "" : "; " + end.hold));
    // The nodes that failed it, counted; one that failed too many jobs is drained.
    for (NodeId n : its_failed) {
      NodeFailures& count = node_failures_[n];
      count.jobs.push_back(id);
      if (static_cast<int>(count.jobs.size()) >= config_.controller.node_failure_drain &&
          !drained_[n])
        to_drain.push_back(n);
    }
  }
  if (!to_drain.empty()) {
    std::sort(to_drain.begin(), to_drain.end());
    to_drain.erase(std::unique(to_drain.begin(), to_drain.end()), to_drain.end());
    // Drained together when they failed the same jobs (the nodes of one agent, typically).
    std::map<std::vector<JobId>, std::vector<NodeId>> by_jobs;
    for (NodeId n : to_drain) by_jobs[node_failures_[n].jobs].push_back(n);
    for (const auto& [jobs, drain_nodes] : by_jobs) {
      std::string list;
      for (size_t i = 0; i < jobs.size(); ++i) list += (i ? ", " : "") + std::to_string(jobs[i]);
      const std::string reason = "failed " + std::to_string(jobs.size()) + " jobs (" + list +
                                 "; [controller] node_failure_drain = " +
                                 std::to_string(config_.controller.node_failure_drain) +
                                 "), last: " + why;
      if (Status ok = store_.set_drained(drain_nodes, true, reason, now); !ok) return ok;
      log_line("nodes " +
               format_hostlist(NodeSet::of(machine_.node_count(), drain_nodes), kNodePrefix) +
               " drained: " + reason);
      for (NodeId n : drain_nodes) {
        const bool was_in_service = in_service(n);
        drained_[n] = true;
        if (was_in_service && tracking()) (void)core_->node_down(n, now);
      }
    }
  }
  pass_wanted_ = true;
  return Ok{};
}

void Controller::record_heard(Seconds now) {
  (void)now;
  // Once per agent, every node in one statement: what `show node` and the read path show as the
  // last heartbeat. (Liveness itself is decided from the pings, in memory.)
  for (const auto& [agent, heard] : liveness_.heard()) {
    const auto& [nodes, when] = heard;
    if (when <= 0 || nodes.empty()) continue;
    std::vector<std::string> names;
    for (NodeId n : nodes) names.push_back(node_name(n));
    (void)store_.nodes_seen(names, agent, when);  // a node down meanwhile is the store's to refuse
  }
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
  // What the jobs hold of each typed node, from their grants (a job without one: all of it).
  struct Held {
    int cpus = 0;
    int64_t memory_mb = 0;
    int gpus = 0;
  };
  std::map<NodeId, Held> held;
  if (!node_types_.empty()) {
    JobQuery active;
    active.only_active = true;
    Result<std::vector<StoredJob>> jobs = store_.list_jobs(active);
    if (!jobs) return jobs.error();
    for (const StoredJob& job : *jobs) {
      if (!holds_nodes(job.state)) continue;
      std::map<NodeId, const NodeGrant*> grant_of;
      for (const NodeGrant& g : job.grants) grant_of[g.node] = &g;
      for (NodeId node : job.nodes) {
        const NodeInventory* has = node_types_.of(node);
        if (!has) continue;
        Held& h = held[node];
        if (auto g = grant_of.find(node); g != grant_of.end()) {
          h.cpus += static_cast<int>(g->second->cores.size()) * has->threads_per_core;
          h.memory_mb += g->second->memory_mb;
          h.gpus += static_cast<int>(g->second->gpus.size());
        } else {
          h = {has->cpus(), has->memory_mb, static_cast<int>(has->gpus.size())};
        }
      }
    }
  }
  v1::ListNodesReply reply;
  reply.set_machine(machine_.spec());
  auto lock = lock_memory();
  for (const StoredNode& node : *nodes) {
    if (node.id < 0 || node.id >= n || !wanted.test(node.id)) continue;
    v1::NodeInfo* info = reply.add_nodes();
    *info = node_info(node, machine_);
    if (const NodeInventory* has = node_types_.of(node.id)) {
      const Held h = held.count(node.id) ? held[node.id] : Held{};
      info->set_alloc_known(true);
      info->set_alloc_cpus(std::min(h.cpus, has->cpus()));
      info->set_alloc_memory_mb(std::min(h.memory_mb, has->memory_mb));
      info->set_alloc_gpus(std::min(h.gpus, static_cast<int>(has->gpus.size())));
      // Part of it held, part free: Slurm's MIXED.
      if (info->state() == v1::ALLOCATED && h.cpus < has->cpus()) info->set_state(v1::MIXED);
    }
    // The scheduler knows more recent than the store: when it last heard the agent, and whether
    // it answers now.
    if (scheduler_ && static_cast<size_t>(node.id) < responsive_.size()) {
      Seconds heard = liveness_.last_heard(node.agent);
      if (heard > info->last_heartbeat()) info->set_last_heartbeat(heard);
      if (node.up && !responsive_[node.id] && info->reason().empty())
        info->set_reason("not responding");
    }
  }
  return reply;
}

}  // namespace trellis
