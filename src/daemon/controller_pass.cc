#include <signal.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/hostlist.h"
#include "daemon/controller.h"
#include "daemon/controller_saved_state.h"
#include "daemon/job_spec.h"
#include "daemon/log.h"
#include "daemon/slurm_env.h"

// Scheduling passes and what they send: the starts a pass commits and launches, pending jobs'
// notes, when the next pass is due, and the launch and signal requests to agents.

namespace trellis {

Result<std::vector<JobId>> Controller::run_pass(Seconds now) {
  auto lock = lock_memory();
  now = not_before_latest(now);
  // tick() at this same instant has just brought the memory up to the store (a change since
  // wakes the scheduler again): reading it a second time would find nothing new.
  const bool fresh = (scheduler_ || concurrent_) && tracking() && synced_at_ == now;
  if (!fresh)
    if (Status ok = sync(now); !ok) return ok.error();
  if (!scheduler_ && !concurrent_) return std::vector<JobId>{};
  pass_wanted_ = false;
  if (Status ok = admit_waiting(now); !ok) return ok.error();
  PassResult decided = core_->pass(now);
  PassCommit commit;
  // Under concurrent allocation a pass needs no lease: each start is checked node by node, and
  // one that meets another controller's is left out (partial).
  commit.scheduler = concurrent_ ? "" : identity_;
  commit.partial = concurrent_;
  std::vector<JobId> started;
  for (const CoreDecision& d : decided.decisions) {
    if (d.kind != CoreDecision::Kind::kStart) continue;
    auto job = pending_.find(d.job);
    if (job == pending_.end()) continue;
    JobStart start;
    start.job = d.job;
    start.attempt = job->second.attempt + 1;
    start.nodes = d.nodes.to_vector();
    if (shares_nodes_) {
      start.grants = d.grants;
      const Job* placed = batch_->find(d.job);
      start.shares_nodes = placed && placed->request.demand && !placed->request.demand->whole;
    }
    if (d.box) {
      for (size_t axis = 0; axis < d.box->extents.size(); ++axis)
        start.box_anchor.push_back(d.box->anchor[axis]);
      start.box_extents = d.box->extents;
    }
    commit.starts.push_back(std::move(start));
  }
  if (gang_) {
    // The log is saved with every start (the restored core must hold the started jobs), after
    // calls other than slots, and every kGangStateInterval for the slots and frozen times.
    if (!commit.starts.empty() || gang_log_dirty_ || now - gang_state_saved_ >= kGangStateInterval)
      commit.core_state = gang_state_text(now);
  }
  commit.notes = pending_notes(now);
  // Under concurrent allocation the one slot of core_state is the lease holder's to write.
  if (!gang_ && (scheduler_ || !concurrent_)) {
    std::string batch_state = batch_state_text();
    if (batch_state != reservations_text_) commit.core_state = batch_state;
  }
  if (commit.starts.empty() && commit.notes.empty() && !commit.core_state) {
    if (gang_) switch_jobs(decided, now);
    return started;
  }
  Result<PassOutcome> outcome = store_.apply_pass(commit, now);
  if (!outcome) {
    // Nothing was committed: the core must forget the starts too, or it would believe nodes are
    // held that the store says are free. Rebuilding from the store is the one way back.
    Status rebuilt = rebuild(now, /*relaunch=*/false);
    if (!rebuilt) return rebuilt.error();
    return outcome.error();
  }
  // Concurrent allocation: starts that met another controller's commit wait again at their place
  // in the queue; the next pass reads the log first (what took their nodes) and places them anew.
  std::set<JobId> refused(outcome->refused.begin(), outcome->refused.end());
  for (JobId id : refused) {
    if (Status back = batch_->unstart(id); !back) {
      Status rebuilt = rebuild(now, /*relaunch=*/false);
      if (!rebuilt) return rebuilt.error();
      return fail(Error::Code::kInternal,
                  "job " + std::to_string(id) +
                      ": a refused start could not be undone: " + back.error().message);
    }
    ++conflicts_;
  }
  if (!refused.empty()) {
    pass_wanted_ = true;
    synced_at_ = -1;
  }
  if (commit.core_state) {
    if (gang_) {
      gang_log_dirty_ = false;
      gang_state_saved_ = now;
    } else {
      reservations_text_ = *commit.core_state;
    }
  }
  for (const PendingNote& note : commit.notes) notes_[note.job] = note;
  for (const JobStart& start : commit.starts) {
    if (refused.count(start.job)) continue;
    auto job = pending_.find(start.job);
    StoredJob stored = std::move(job->second);
    pending_.erase(job);
    notes_.erase(start.job);
    stored.attempt = start.attempt;
    stored.state = JobState::kRunning;
    stored.start_time = now;
    stored.nodes = start.nodes;
    stored.grants = start.grants;
    LiveJob live;
    live.array_job = stored.array_job;
    live.attempt = start.attempt;
    live.start = now;
    live.limit_at = now + stored.time_limit;
    live.nodes = start.nodes;
    running_[start.job] = std::move(live);
    // Launched even when another controller's change came in between: the start is committed.
    send_launch(stored, start.attempt, start.nodes, Launching::kStart);
    started.push_back(start.job);
  }
  if (gang_) switch_jobs(decided, now);
  // A waiting job may wait for one of these to start (after:ID).
  if (!started.empty() && !waiting_.empty()) pass_wanted_ = true;
  return started;
}

std::vector<PendingNote> Controller::pending_notes(Seconds now) {
  std::map<JobId, Seconds> promised;
  for (const Reservation& r : core_->reservations()) promised[r.job] = r.start;
  std::vector<PendingNote> changed;
  auto note = [&](JobId id, std::string_view reason, Seconds expected_start) {
    auto old = notes_.find(id);
    if (old == notes_.end() || old->second.reason != reason ||
        std::abs(old->second.expected_start - expected_start) > 0.5)
      changed.push_back({id, std::string(reason), expected_start});
  };
  for (const auto& [id, reason] : waiting_reason_)
    if (waiting_.count(id)) note(id, reason, 0);
  if (gang_) {
    for (const auto& [id, job] : pending_) {
      if (gang_->find(id) == nullptr || gang_->partition_of(id)) continue;  // started by now
      if (gang_->why_waiting(id) == GangCore::Wait::kForASlot)
        note(id, "Priority (waits for its first time slot)", 0);
      else if (job.share)
        note(id, "Resources (its nodes are kept for a job without --share)", 0);
      else
        note(id, "Resources (waits until no other job is on its nodes)", 0);
    }
    return changed;
  }
  bool first = true;
  // Called at every pass over the head of the queue that the pass looked at (max_job_test), so
  // that a deep queue costs no more than a shallow one; a note is built only when it changed. A
  // job behind the head waits for its turn: noted once, when it joins the queue, below.
  const std::vector<const Job*>& queue = batch_->queue();
  const size_t tested = batch_->jobs_tested();
  for (size_t i = 0; i < tested; ++i) {
    const Job* job = queue[i];
    // A job an account's limit holds back is not shown to the policy (sched/start_limits.h).
    std::string limited = limits_ ? limits_->held_back(*job) : "";
    std::string reason = !limited.empty() ? limited : first ? "Resources" : "Priority";
    if (first && limited.empty() && job->request.has_shape())
      reason = "Resources (no free " + format_shape(job->request.shape) + " box yet)";
    if (limited.empty()) first = false;
    Seconds expected_start = 0;
    if (auto p = promised.find(job->id); p != promised.end())
      expected_start = std::max(now, p->second);
    note(job->id, reason, expected_start);
  }
  std::set<JobId> head;
  if (!queued_since_pass_.empty())
    for (size_t i = 0; i < tested; ++i) head.insert(queue[i]->id);
  for (JobId id : queued_since_pass_)
    if (pending_.count(id) && !head.count(id)) note(id, "Priority", 0);
  queued_since_pass_.clear();
  return changed;
}

std::string Controller::batch_state_text() const {
  std::string reservations = reservations_to_text(core_->reservations());
  nlohmann::json frozen = nlohmann::json::array();
  for (const auto& [id, live] : running_)
    if (live.frozen || live.frozen_before > 0)
      frozen.push_back({{"job", id},
                        {"attempt", live.attempt},
                        {"frozen", live.frozen},
                        {"since", live.frozen ? live.frozen_since : 0.0},
                        {"before", live.frozen_before}});
  if (frozen.empty()) return reservations;  // the format that has no frozen times
  nlohmann::json out = {{"reservations", nlohmann::json::parse(reservations)},
                        {"frozen", std::move(frozen)}};
  return out.dump();
}

v1::LaunchRequest Controller::launch_request(const StoredJob& job, int attempt,
                                             const std::vector<NodeId>& nodes) const {
  v1::LaunchRequest request;
  request.set_job_id(job.id);
  request.set_attempt(attempt);
  request.set_nodelist(format_hostlist(NodeSet::of(machine_.node_count(), nodes), kNodePrefix));
  request.set_nnodes(static_cast<int>(nodes.size()));
  for (NodeId node : nodes) request.add_nodes(node_name(node));  // in node-id order
  for (const std::string& arg : job.argv) request.add_argv(arg);
  request.set_cwd(job.cwd);
  request.set_output(resolve_output_path(job.output, job));
  request.set_error(resolve_output_path(job.error, job));
  for (const auto& [key, value] : job.env) (*request.mutable_env())[key] = value;
  add_slurm_variables(job, request.nodelist(), static_cast<int>(nodes.size()),
                      *request.mutable_env());
  request.set_uid(job.uid);
  request.set_gid(job.gid);
  request.set_time_limit(job.time_limit);
  // Step 0, the job's command, over all of its nodes.
  request.set_step(0);
  TaskLayout layout = job_layout(job);
  if (layout.nnodes() == static_cast<int>(nodes.size()))
    for (int count : layout.counts()) request.add_tasks_per_node(count);
  request.set_distribution(std::string(distribution_name(layout.distribution())));
  request.set_mpi(job.tasks.mpi.empty() ? config_.controller.mpi : job.tasks.mpi);
  request.set_label(job.tasks.label);
  request.set_cpu_bind(job.tasks.cpu_bind);
  request.set_gpu_bind(job.tasks.gpu_bind);
  request.set_cpus_per_task(job.resources.cpus_per_task);
  request.set_gpus_per_task(job.resources.gpus_per_task);
  request.set_exchange_fanout(config_.controller.pmi_fanout);
  request.set_kill_grace(config_.controller.kill_grace);
  // A job beside others on its nodes must leave their tasks alone.
  request.set_whole_nodes(!time_shares() && !shares_its_nodes(job));
  if (!job.grants.empty()) {
    // What it holds on each node, and what the node has: the agent's limits and variables.
    std::map<NodeId, const NodeGrant*> grant_of;
    for (const NodeGrant& grant : job.grants) grant_of[grant.node] = &grant;
    for (NodeId node : nodes) {
      auto grant = grant_of.find(node);
      const NodeInventory* inventory = node_types_.of(node);
      request.add_node_grants(grant != grant_of.end() ? encode_grant(*grant->second) : "");
      request.add_node_types(inventory ? node_inventory_text(*inventory) : "");
    }
  }
  // The agents in the order of their first node: the tree of the step's PMI exchange.
  std::set<std::string> seen;
  for (NodeId node : nodes) {
    const std::string& agent = agent_of_[node];
    if (!agent.empty() && seen.insert(agent).second) request.add_step_agents(agent);
  }
  return request;
}

bool Controller::shares_its_nodes(const StoredJob& job) const {
  return std::any_of(job.grants.begin(), job.grants.end(), [&](const NodeGrant& grant) {
    const NodeInventory* node = node_types_.of(grant.node);
    return node != nullptr && static_cast<int>(grant.cores.size()) < node->cores();
  });
}

void Controller::send_launch(const StoredJob& job, int attempt, const std::vector<NodeId>& nodes,
                             Launching why, const std::string& only_agent) {
  // One message down the tree of the job's agents; each starts the tasks of the nodes it serves.
  // (A node never registered has no agent: it is down, and the job will be requeued.)
  std::vector<std::string> agents =
      only_agent.empty() ? agents_of(nodes) : std::vector<std::string>{only_agent};
  if (agents.empty()) return;
  v1::LaunchRequest request = launch_request(job, attempt, nodes);
  request.set_reconcile(why == Launching::kAgain && request.whole_nodes());
  if (job.script_id != 0) {
    // A batch job: its script, as stored when it was submitted, runs on its first node.
    Result<std::string> script = store_.job_script(job.script_id);
    if (!script) {
      // The store cannot be read: the launch is sent again when a controller next takes the
      // lease (reconciliation); until then the job holds its nodes without running.
      log_line("job " + std::to_string(job.id) + ": its batch script cannot be read from the " +
               "store (" + script.error().message + "); not launched now");
      return;
    }
    request.set_script(std::move(*script));
  }
  agents_.launch(agents, request);
}

std::vector<std::string> Controller::agents_of(const std::vector<NodeId>& nodes) {
  auto unknown = [&] {
    return std::any_of(nodes.begin(), nodes.end(), [&](NodeId n) {
      return n >= 0 && n < machine_.node_count() && agent_of_[n].empty();
    });
  };
  if (unknown()) {  // registered with another controller since this one last read the store
    if (Result<std::vector<StoredNode>> stored = store_.list_nodes(); stored)
      for (const StoredNode& node : *stored)
        if (node.id >= 0 && node.id < machine_.node_count() && !node.agent.empty())
          agent_of_[node.id] = node.agent;
  }
  // In node order: each agent where its first node of the set is.
  std::vector<NodeId> sorted = nodes;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> agents;
  std::set<std::string> seen;
  for (NodeId node : sorted)
    if (node >= 0 && node < machine_.node_count() && !agent_of_[node].empty() &&
        seen.insert(agent_of_[node]).second)
      agents.push_back(agent_of_[node]);
  return agents;
}

void Controller::send_signal(JobId id, int attempt, const std::vector<NodeId>& nodes, int signal) {
  std::vector<std::string> agents = agents_of(nodes);
  if (agents.empty()) return;
  v1::SignalRequest request;
  request.set_job_id(id);
  request.set_attempt(attempt);
  request.set_signal(signal);
  request.set_grace_seconds(config_.controller.kill_grace);
  agents_.signal(agents, request);
}

bool Controller::pass_due(Seconds now) const {
  std::lock_guard lock(mutex_);
  std::optional<Seconds> promised = core_->next_wakeup();
  if (promised && *promised <= now) return true;
  bool wanted = pass_wanted_;
  if (!wanted) {
    // Committed submissions and ends not applied yet (the pass applies them first).
    std::lock_guard inbox(committed_mutex_);
    wanted = !submitted_inbox_.empty() || !ended_inbox_.empty();
  }
  if (!wanted) return false;
  // Under a gang policy a slot runs its whole length, as in the thesis's scheduler and in the
  // simulator: a submission or an end during a slot is taken at the slot's end (a pass is the
  // next slot, and passing at every event would cut the running jobs' slots short). Only a slot
  // in which nothing runs any more is ended at once.
  if (gang_ && promised) {
    for (const gang::SlotJob& r : gang_->slot()) {
      auto live = running_.find(r.job);
      if (live != running_.end() && live->second.stop == StopCause::kNone && !live->second.idle &&
          !live->second.frozen)
        return false;
    }
  }
  return true;
}

std::optional<Seconds> Controller::next_wakeup() const {
  std::lock_guard lock(mutex_);
  std::optional<Seconds> wake = core_->next_wakeup();
  auto earliest = [&](Seconds t) {
    if (!wake || t < *wake) wake = t;
  };
  for (const auto& [id, live] : running_)
    if (live.stop == StopCause::kNone && !live.frozen) earliest(live.limit_at);
  return wake;
}

}  // namespace trellis
