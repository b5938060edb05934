#include "daemon/controller.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "alloc/home_region.h"
#include "alloc/partition_mask.h"
#include "alloc/registry.h"
#include "core/hostlist.h"
#include "daemon/controller_saved_state.h"
#include "daemon/log.h"
#include "sched/demand.h"
#include "sched/gang/registry.h"
#include "sched/registry.h"
#include "sched/request_shaping.h"

// The controller's life: opening on a store, rebuilding its memory from it, following what other
// controllers commit (sync, replay) and the scheduler lease. The events it handles are in
// controller_jobs.cc (job lifecycle), controller_nodes.cc (node membership and liveness),
// controller_pass.cc (passes and launches) and controller_gang.cc (gang switching).

namespace trellis {
namespace {

// Whether a "state" event's detail (set_job_state()'s "FROM -> TO: reason") is an
// administrator's suspend or resume.
bool is_suspension_event(std::string_view detail) {
  const std::string suspended = std::string(state_name(JobState::kRunning)) + " -> " +
                                std::string(state_name(JobState::kSuspended));
  const std::string resumed = std::string(state_name(JobState::kSuspended)) + " -> " +
                              std::string(state_name(JobState::kRunning));
  return detail.starts_with(suspended) || detail.starts_with(resumed);
}

}  // namespace

Controller::Controller(const ClusterConfig& config, StateStore& store, AgentLink& agents,
                       Machine machine)
    : config_(config),
      store_(store),
      agents_(agents),
      machine_(std::move(machine)),
      liveness_(config.controller.heartbeat_misses) {
  const auto batch_wait =
      std::chrono::microseconds(static_cast<int64_t>(config.controller.batch_wait * 1e6));
  submissions_.set_gather_wait(batch_wait);
  exit_reports_.set_gather_wait(batch_wait);
}

Result<std::unique_ptr<Controller>> Controller::open(const ClusterConfig& config, StateStore& store,
                                                     AgentLink& agents, Seconds now,
                                                     std::string identity) {
  Result<Machine> machine = Machine::parse(config.machine);
  if (!machine) return fail("[cluster] machine: " + machine.error().message);
  std::unique_ptr<Controller> c(new Controller(config, store, agents, *machine));
  if (identity.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    identity = std::string(host) + ":" + std::to_string(getpid());
  }
  c->identity_ = std::move(identity);
  c->concurrent_ = config.controller.allocation == AllocationMode::kConcurrent;
  const Machine& m = c->machine_;
  // A gang policy's partitions run along the buddy allocator's curve unless another is named.
  std::string allocator_name = !config.controller.allocator.empty() ? config.controller.allocator
                               : gang::GangPolicyRegistry::builtin().find(config.controller.policy)
                                   ? "buddy"
                                   : default_allocator_for(m);
  Result<std::unique_ptr<Allocator>> allocator =
      AllocatorRegistry::builtin().create(allocator_name, m);
  if (!allocator) return fail("[controller] allocator: " + allocator.error().message);
  // Partitions: each job is placed only on its partition's nodes, by the allocator working on the
  // whole machine (alloc/partition_mask.h).
  c->partitions_ = cluster_partitions(config);
  for (const PartitionConfig& p : c->partitions_) {
    std::shared_ptr<const NodeSet> nodes;
    if (!p.nodes.empty()) {
      Result<NodeSet> parsed = parse_hostlist(p.nodes, m.node_count(), kNodePrefix);
      if (!parsed) return fail("[[partition]] " + p.name + " nodes: " + parsed.error().message);
      if (parsed->empty()) return fail("[[partition]] " + p.name + " nodes: no node");
      if (parsed->count() < m.node_count()) nodes = std::make_shared<const NodeSet>(*parsed);
    }
    c->partition_nodes_[p.name] = std::move(nodes);
  }
  Result<NodeTypes> types = NodeTypes::build(config.node_types, m.node_count());
  if (!types) return types.error();
  c->node_types_ = std::move(*types);
  std::unique_ptr<Allocator> placing = std::move(*allocator);
  if (c->concurrent_) {
    // Each concurrent controller prefers its own share of the machine (check_in() sets it).
    auto home = std::make_unique<HomeRegion>(m, std::move(placing));
    c->home_region_ = home.get();
    placing = std::move(home);
  }
  c->allocator_ = std::make_unique<PartitionMask>(m, std::move(placing));
  c->allocator_name_ = allocator_name;
  const AllocatorInfo* info = AllocatorRegistry::builtin().find(allocator_name);
  c->pads_counts_ = info && info->places_only_boxes && m.torus() != nullptr;
  Result<bool> gang = c->open_gang();
  if (!gang) return gang.error();
  if (*gang && c->concurrent_)
    return fail("[controller] allocation = \"concurrent\": gang policy '" +
                config.controller.policy +
                "' keeps one schedule of time slots for the whole machine, which one controller "
                "must decide; use allocation = \"lease\" or a queue policy");
  for (const PartitionConfig& p : c->partitions_) {
    if (!p.shared) continue;
    const std::string where = "[[partition]] " + p.name + ": shared = true ";
    if (!c->node_types_.covers_every_node())
      return fail(where + "needs a [[nodetype]] for every node (what each node has to share)");
    if (*gang)
      return fail(where + "is for queue policies; gang policy '" + config.controller.policy +
                  "' time-shares whole nodes");
    if (c->concurrent_)
      return fail(where +
                  "needs allocation = \"lease\": concurrent controllers check only "
                  "whole nodes against each other");
    c->shares_nodes_ = true;
  }
  if (!*gang) {
    Result<std::unique_ptr<QueuePolicy>> policy =
        PolicyRegistry::builtin().create(config.controller.policy, m);
    if (!policy) return fail("[controller] policy: " + policy.error().message);
    c->policy_ = std::move(*policy);
    BatchOptions options;
    options.max_job_test = static_cast<size_t>(config.controller.max_job_test);
    const PrioritySettings& p = config.priority;
    if (p.fair_share != "none") {
      PriorityWeights weights{.age = p.weight_age,
                              .fair_share = p.weight_fairshare,
                              .job_size = p.weight_jobsize,
                              .qos = p.weight_qos,
                              .max_age = p.max_age,
                              .half_life = p.half_life,
                              .classic = p.fair_share == "classic"};
      c->priority_ = std::make_unique<PriorityOrder>(ShareTree(), m.node_count(), weights);
      options.order = c->priority_.get();
    }
    c->limits_ = std::make_unique<AccountLimits>();
    options.limits = c->limits_.get();
    if (c->shares_nodes_) {
      options.node_types = c->node_types_.inventories();
      options.type_of = c->node_types_.type_indexes();
    }
    auto batch =
        std::make_unique<BatchCore>(c->machine_, *c->allocator_, *c->policy_, std::move(options));
    c->batch_ = batch.get();
    c->core_ = std::move(batch);
  }

  std::vector<std::string> names;
  for (NodeId n = 0; n < m.node_count(); ++n) names.push_back(c->node_name(n));
  if (Status ok = store.init_cluster(m.spec(), names); !ok) return ok.error();
  // The memory is read now, so that a store that cannot be read fails the start; launches are
  // sent again only by the controller that takes the scheduler lease (sync()).
  // Checked in before it takes a submission, so that the lease holder never adopts its jobs.
  if (c->concurrent_)
    if (Status ok = c->check_in(now); !ok) return ok.error();
  if (Status ok = c->rebuild(now, /*relaunch=*/false); !ok) return ok.error();
  return c;
}

std::string Controller::node_name(NodeId node) const {
  return std::string(kNodePrefix) + std::to_string(node);
}

Result<NodeId> Controller::node_id(std::string_view name) const {
  // The names agents send ("n123") without a set of the whole machine: this runs once per exit
  // reported, 110,592 times for a full-machine job on torus:48x48x48. Any other form goes
  // through the hostlist parser, as before.
  std::string_view digits = name.substr(std::min(name.size(), kNodePrefix.size()));
  if (name.starts_with(kNodePrefix) && !digits.empty() && digits.size() <= 9 &&
      digits.find_first_not_of("0123456789") == std::string_view::npos &&
      (digits[0] != '0' || digits.size() == 1)) {
    NodeId id = 0;
    for (char c : digits) id = id * 10 + (c - '0');
    if (id < machine_.node_count()) return id;
    return fail(Error::Code::kNotFound, "node '" + std::string(name) + "' is not in this cluster");
  }
  Result<NodeSet> parsed = parse_hostlist(name, machine_.node_count(), kNodePrefix);
  if (!parsed || parsed->count() != 1)
    return fail(Error::Code::kNotFound, "node '" + std::string(name) + "' is not in this cluster");
  return parsed->first();
}

Job Controller::core_job(const StoredJob& s) const {
  Job job;
  job.id = s.id;
  job.submit = s.submit_time;
  job.time_limit = s.time_limit;
  job.request = placed_request(s.request);
  job.share = s.share;
  job.user = s.uid;
  job.group = s.gid;
  job.name = s.name;
  job.association = association_id(s.user, s.account);
  job.qos = qos_id(s.qos);
  if (auto nodes = partition_nodes_.find(s.partition); nodes != partition_nodes_.end())
    job.request.allowed = nodes->second;
  if (shares_nodes_) {
    // What it takes of each node, by its partition's kind of node and policy (sched/demand.h).
    job.resources = s.resources;
    const PartitionConfig* partition = nullptr;
    for (const PartitionConfig& p : partitions_)
      if (p.name == s.partition) partition = &p;
    const NodeId first = job.request.allowed ? job.request.allowed->first() : 0;
    const NodeInventory* node = node_types_.of(first);
    DemandContext context{
        .node = node ? *node : NodeInventory{},
        .tasks_per_node = NodeTypes::most_tasks_per_node(s),
        .shared = partition != nullptr && partition->shared,
        .default_mem_per_cpu_mb = partition != nullptr ? partition->default_mem_per_cpu_mb : 0};
    // A request the partition's first kind of node cannot hold (a partition of several kinds;
    // submission checked that some node can) takes whole nodes.
    if (Status ok = set_demand(job, context); !ok)
      log_line("job " + std::to_string(s.id) + ": takes whole nodes: " + ok.error().message);
  }
  return job;
}

Request Controller::placed_request(const Request& asked) const {
  return pads_counts_ ? pad_to_box(*machine_.torus(), asked) : asked;
}

Status Controller::rebuild(Seconds now, bool relaunch) {
  const int n = machine_.node_count();
  if (int64_t epoch = outstanding_epoch(); epoch >= 0) rebuilt_at_epoch_ = epoch;
  synced_version_ = -1;
  synced_at_ = -1;
  // Where the store is, read first: a change committed while the rest is read is replayed by the
  // next sync() (replaying what is in memory already changes nothing).
  Result<StoreHead> head = store_.head();
  if (!head) return head.error();
  Result<std::vector<StoredNode>> nodes = store_.list_nodes();
  if (!nodes) return nodes.error();
  agent_of_.assign(n, "");
  up_.assign(n, false);
  drained_.assign(n, false);
  // Every agent gets its full liveness window after a rebuild: pings count from now.
  responsive_.assign(n, true);
  std::map<std::string, std::vector<NodeId>> agents;
  std::set<std::string> with_nodes_up;
  for (const StoredNode& node : *nodes) {
    if (node.id < 0 || node.id >= n) continue;
    agent_of_[node.id] = node.agent;
    up_[node.id] = node.up;
    drained_[node.id] = node.drained;
    if (node.agent.empty()) continue;
    agents[node.agent].push_back(node.id);
    if (node.up) with_nodes_up.insert(node.agent);
  }
  liveness_.clear();
  for (const auto& [agent, its_nodes] : agents) {
    liveness_.add(agent, its_nodes, now);
    // An agent whose nodes are all down comes back by registering (if it answers).
    if (!with_nodes_up.count(agent)) liveness_.want_registration(agent);
  }

  JobQuery active;
  active.only_active = true;
  Result<std::vector<StoredJob>> jobs = store_.list_jobs(active);
  if (!jobs) return jobs.error();
  std::vector<JobId> holding;
  for (const StoredJob& job : *jobs)
    if (job.state != JobState::kPending) holding.push_back(job.id);
  Result<std::set<JobId>> with_steps = store_.jobs_with_steps(holding);
  if (!with_steps) return with_steps.error();
  CoreSnapshot snapshot;
  snapshot.down = NodeSet(n);
  // A gang core keeps every node in its partition tree (GangCore::node_down).
  for (NodeId id = 0; id < n && !gang_; ++id)
    if (!in_service(id)) snapshot.down.set(id);
  snapshot.last_pass = now;
  running_.clear();
  pending_.clear();
  waiting_.clear();
  admin_suspended_.clear();
  leaving_rotation_.clear();
  // Running array tasks count against their arrays' limits before pending ones are let in. A job
  // held (trellis release) is in neither pending_ nor waiting_ until it is released.
  for (const StoredJob& job : *jobs)
    if (job.state != JobState::kPending) running_[job.id].array_job = job.array_job;
  for (const StoredJob& job : *jobs) {
    if (job.state != JobState::kPending || !job.hold.empty() || !places(job)) continue;
    if (!job.dependency.empty() || !array_has_room(job.array_job, job.array_limit))
      waiting_[job.id] = job;
    else
      pending_[job.id] = job;
  }
  Result<std::optional<std::string>> state = store_.core_state();
  if (!state) return state.error();
  SavedBatchState saved;
  if (!gang_ && *state) {
    reservations_text_ = **state;
    saved = batch_state_from_text(**state, n, pending_);
  }
  std::vector<const StoredJob*> relaunch_jobs;
  std::vector<JobId> suspended;
  for (const StoredJob& job : *jobs) {
    if (job.state == JobState::kPending) {
      if (pending_.count(job.id)) snapshot.queue.push_back(core_job(job));
      continue;
    }
    LiveJob live = LiveJob::of(job);
    // Steps it launched before (a step launched after the head was read comes as a "step"
    // event): their ends are recorded, and their tasks killed, when it ends.
    live.has_steps = with_steps->count(job.id) > 0;
    // Suspended by an administrator (the store's S): frozen until resumed. A gang policy's saved
    // state has the frozen times (restore_gang()); a queue policy's, core_state.
    if (job.state == JobState::kSuspended) {
      admin_suspended_.insert(job.id);
      live.frozen = true;
      live.frozen_since = now;
      suspended.push_back(job.id);
    }
    if (auto f = saved.frozen.find(job.id);
        f != saved.frozen.end() && f->second.attempt == job.attempt) {
      live.frozen_before = f->second.frozen_before;
      live.limit_at += live.frozen_before;
      if (live.frozen && f->second.frozen) live.frozen_since = f->second.frozen_since;
    }
    RunningJob r;
    r.id = job.id;
    r.start = job.start_time;
    r.expected_end = live.limit_at;
    r.nodes = NodeSet::of(n, job.nodes);
    r.node_count = static_cast<int>(job.nodes.size());
    if (shares_nodes_) r.grants = job.grants;  // none: whole nodes (BatchCore::restore)
    snapshot.running.push_back(std::move(r));
    snapshot.running_jobs.push_back(core_job(job));
    running_[job.id] = std::move(live);
    relaunch_jobs.push_back(&job);
  }
  if (gang_) {
    if (Status ok = restore_gang(snapshot, *state ? **state : "", now); !ok) return ok;
  } else {
    snapshot.reservations = std::move(saved.reservations);
    if (Status ok = reload_priority(now); !ok) return ok;
    if (Status ok = core_->restore(snapshot); !ok)
      return fail(Error::Code::kInternal,
                  "rebuilding the scheduler from the store: " + ok.error().message);
    if (priority_) {
      for (size_t i = 0; i < snapshot.running_jobs.size(); ++i)
        priority_->started(snapshot.running_jobs[i], snapshot.running[i].start);
    }
    // The agents may have missed the freeze: the scheduler tells them again (restore_gang() tells
    // them the whole state).
    if (scheduler_ && !suspended.empty()) send_switch(suspended, {}, now);
  }
  notes_.clear();
  for (const auto* jobs_of : {&pending_, &waiting_})
    for (const auto& [id, job] : *jobs_of)
      notes_[id] = PendingNote{id, job.reason, job.expected_start};
  synced_version_ = head->version;
  synced_event_ = head->last_event;
  finished_.clear();
  // Reconciliation: a launch that never reached its agent is delivered now; one that did is a
  // no-op there (same job and attempt), and an agent re-reports a task that has ended.
  if (relaunch) {
    for (const StoredJob* job : relaunch_jobs) {
      send_launch(*job, job->attempt, job->nodes, Launching::kAgain);
      if (job->stop != StopCause::kNone) send_signal(job->id, job->attempt, job->nodes, 0);
    }
  }
  pass_wanted_ = true;
  return Ok{};
}

Status Controller::sync(Seconds now) {
  const Seconds ttl = config_.controller.scheduler_lease;
  // The lease is renewed when half of it is left, and sought every quarter of it while another
  // controller has it (often enough to take over soon after it runs out, seldom enough that
  // waiting controllers do not crowd the store's write lock).
  bool renew = scheduler_ && now >= lease_until_ - ttl / 2;
  bool seek = !scheduler_ && now >= next_lease_try_;
  if (renew || seek) {
    next_lease_try_ = now + ttl / 4;
    Result<bool> held = store_.hold_lease(identity_, now, ttl);
    if (!held) return held.error();
    bool took_over = *held && !scheduler_;
    scheduler_ = *held;
    if (scheduler_) lease_until_ = now + ttl;
    if (took_over) return rebuild(now, /*relaunch=*/true);
  }
  if (concurrent_) {
    // Every controller places jobs, so every one follows the store.
    if (Status ok = check_in(now); !ok) return ok;
    if (!tracking()) return rebuild(now, /*relaunch=*/false);
  } else if (!scheduler_) {
    synced_version_ = -1;  // another controller schedules; this one keeps no memory of jobs
    return Ok{};
  }
  // Where the store is, with the events after the memory's, in one read: catching up replays
  // every one, this controller's own included (already in memory, so replaying them changes
  // nothing). A long way behind, reading everything is faster.
  constexpr int kMostReplayed = 5000;
  Result<StoreChanges> changes = store_.changes(synced_event_, kMostReplayed + 1);
  if (!changes) return changes.error();
  const StoreHead* head = &changes->head;
  if (head->version == synced_version_ && head->last_event == synced_event_) {
    synced_at_ = now;
    return Ok{};
  }
  std::vector<StoredEvent>* events = &changes->events;
  if (static_cast<int>(events->size()) > kMostReplayed) return rebuild(now, /*relaunch=*/false);
  // This controller's batches committed since the memory was last taken are among the events:
  // applied first, they need no rows read.
  apply_committed();
  // The rows of the jobs the events need, in one read.
  JobQuery needed;
  for (const StoredEvent& event : *events) {
    // Under concurrent allocation a submission this controller took is in memory already, and
    // one another took is not its to place: no row is needed.
    bool submitted = !concurrent_ && event.kind == "submit" && !pending_.count(event.job) &&
                     !waiting_.count(event.job) && !running_.count(event.job) &&
                     !finished_.count(event.job);
    // An end is final: replaying it needs no row (below). A requeue's row says whether the job
    // has run again since.
    bool ended = event.kind == "requeue" && running_.count(event.job);
    bool suspension =
        event.kind == "state" && running_.count(event.job) && is_suspension_event(event.detail);
    bool released = event.kind == "release" && !pending_.count(event.job);
    bool foreign_start = concurrent_ && event.kind == "start" && !running_.count(event.job) &&
                         !finished_.count(event.job);
    if (submitted || ended || suspension || released || foreign_start)
      needed.ids.push_back(event.job);
  }
  std::map<JobId, StoredJob> rows;
  if (!needed.ids.empty()) {
    Result<std::vector<StoredJob>> jobs = store_.list_jobs(needed);
    if (!jobs) return jobs.error();
    for (StoredJob& job : *jobs) rows[job.id] = std::move(job);
  }
  for (const StoredEvent& event : *events) {
    Result<bool> followed = replay(event, rows, now);
    if (!followed) return followed.error();
    if (!*followed) return rebuild(now, /*relaunch=*/false);
    synced_event_ = event.seq;
  }
  synced_version_ = head->version;
  finished_.clear();
  synced_at_ = now;
  return Ok{};
}

Result<bool> Controller::replay(const StoredEvent& event, const std::map<JobId, StoredJob>& rows,
                                Seconds now) {
  const JobId id = event.job;
  auto row = rows.find(id);
  const StoredJob* job = row == rows.end() ? nullptr : &row->second;
  if (event.kind == "submit") {
    if (pending_.count(id) || waiting_.count(id) || running_.count(id) || finished_.count(id))
      return true;
    if (concurrent_) return true;  // another controller's: it places it
    if (!job) return false;
    if (is_final(job->state)) return true;               // ended before this controller saw it
    if (job->state != JobState::kPending) return false;  // started by another scheduler
    if (!job->hold.empty()) return true;                 // held since: out of the queue
    // It joins the queue now, when this scheduler learns of it, as a job submitted here does.
    return static_cast<bool>(enqueue(*job, now));
  }
  if (event.kind == "start") {
    if (running_.count(id) > 0 || finished_.count(id) > 0) return true;
    if (!concurrent_ || !job) return false;
    return follow_foreign_start(*job, now);
  }
  // Pending jobs changed hands: who places what is read again.
  if (event.kind == "adopt") return !concurrent_;
  if (event.kind == "release") {
    // A held job let go: it joins the queue now, as one released here does.
    if (pending_.count(id) || waiting_.count(id) || running_.count(id) || finished_.count(id))
      return true;
    if (!job) return false;
    if (job->state != JobState::kPending || !job->hold.empty()) return true;  // moved on since
    if (!places(*job)) return true;  // another controller's to place
    return static_cast<bool>(enqueue(*job, now));
  }
  if (event.kind == "end" || event.kind == "requeue") {
    auto live = running_.find(id);
    if (live == running_.end()) return true;  // ended in memory already
    // Under concurrent allocation the controller that committed the end ended the job's steps.
    if (concurrent_) live->second.has_steps = false;
    if (event.kind == "end") {
      // Final, so no later attempt follows; the memory needs only that the job left (any final
      // state: apply_end() tells a requeue from an end, nothing more).
      if (Status ok = apply_end(id, JobState::kCompleted, now); !ok) return ok.error();
      return true;
    }
    if (!job) return false;
    bool requeued = job->state == JobState::kPending && job->attempt == live->second.attempt;
    if (!is_final(job->state) && !requeued) return false;  // it runs again, started elsewhere
    if (Status ok = apply_end(id, requeued ? JobState::kPending : job->state, now); !ok)
      return ok.error();
    return true;
  }
  if (event.kind == "cancel" || event.kind == "state") {
    if (auto job = pending_.find(id); job != pending_.end()) {
      if (!event.detail.starts_with("PENDING -> CANCELLED")) return false;
      (void)core_->cancel(id, now);
      pending_.erase(job);
      notes_.erase(id);
      finished_.insert(id);
      pass_wanted_ = true;
    } else if (auto waiting = waiting_.find(id); waiting != waiting_.end()) {
      if (!event.detail.starts_with("PENDING -> CANCELLED")) return false;
      waiting_.erase(waiting);
      notes_.erase(id);
      finished_.insert(id);
      pass_wanted_ = true;
    } else if (auto live = running_.find(id); live != running_.end()) {
      if (event.detail.ends_with("COMPLETING: cancelled")) {
        if (live->second.stop == StopCause::kNone) live->second.stop = StopCause::kCancel;
      } else if (event.detail.ends_with("COMPLETING: time limit reached")) {
        if (live->second.stop == StopCause::kNone) live->second.stop = StopCause::kTimeout;
      } else if (event.detail.find(" -> COMPLETING: ") != std::string::npos) {
        // One of its tasks failed (stop_job with kFailed names it in the reason).
        if (live->second.stop == StopCause::kNone) live->second.stop = StopCause::kFailed;
      } else if (is_suspension_event(event.detail)) {
        // An administrator's suspend or resume, applied as the store has it now (a later event
        // may have undone it; those already applied change nothing).
        if (row == rows.end() || row->second.attempt != live->second.attempt) return false;
        if (row->second.state == JobState::kSuspended) apply_suspend(id, now);
        if (row->second.state == JobState::kRunning) apply_resume(id, now);
      } else {
        return false;  // an administrator's change: read it all again
      }
    }
    return true;
  }
  if (event.kind == "node_up" || event.kind == "node_down" || event.kind == "drain" ||
      event.kind == "resume") {
    // One event names every node the change touched, as a hostlist.
    Result<NodeSet> nodes = parse_hostlist(event.node, machine_.node_count(), kNodePrefix);
    if (!nodes || nodes->count() == 0) return false;
    std::vector<NodeId> registered;
    for (NodeId n = nodes->first(); n >= 0; n = nodes->next(n + 1)) {
      const bool was_in_service = in_service(n);
      // A node comes up through its agent's registration, here or at another controller: the
      // agent answers, whatever this controller's pings last found of the agent it had before.
      if (event.kind == "node_up") {
        up_[n] = true;
        responsive_[n] = true;
        registered.push_back(n);
      }
      if (event.kind == "node_down") up_[n] = false;
      if (event.kind == "drain") drained_[n] = true;
      if (event.kind == "resume") drained_[n] = false;
      if (in_service(n) && !was_in_service) (void)core_->node_up(n, now);
      if (!in_service(n) && was_in_service) (void)core_->node_down(n, now);
      if (event.kind == "node_up" && !event.detail.empty()) agent_of_[n] = event.detail;
    }
    // An agent that registered them with another controller (a restarted agent registers with
    // the first that answers) is pinged from now on. One this controller knows is left as it is:
    // adding it again would forget its other nodes and that it was asked to register again.
    if (!registered.empty() && !event.detail.empty() && !liveness_.knows(event.detail))
      liveness_.add(event.detail, registered, now);
    pass_wanted_ = true;
    return true;
  }
  if (event.kind == "step") {  // a step launched through another controller: killed with its job
    if (auto live = running_.find(id); live != running_.end()) live->second.has_steps = true;
    return true;
  }
  if (event.kind == "step_end" || event.kind == "step_state") return true;  // nothing in memory
  return event.kind == "scheduler";  // anything else: read it all again
}

bool Controller::is_scheduler() const {
  std::lock_guard lock(mutex_);
  return scheduler_;
}

void Controller::resign() {
  auto lock = lock_memory();
  if (concurrent_) {
    // Checked out: the lease holder adopts this controller's pending jobs at its next look.
    (void)store_.check_in(identity_, not_before_latest(0), 0);
  }
  if (!scheduler_) return;
  (void)store_.release_lease(identity_);
  scheduler_ = false;
  synced_version_ = -1;
  synced_at_ = -1;
}

bool Controller::is_admin(const Caller& caller) const {
  // The user the daemons run as administers the cluster, as Slurm's SlurmUser does.
  if (caller.uid == static_cast<int>(getuid())) return true;
  return std::find(config_.controller.admins.begin(), config_.controller.admins.end(),
                   caller.uid) != config_.controller.admins.end();
}

bool Controller::is_agent(const Caller& caller) const {
  return is_admin(caller);
}

}  // namespace trellis
