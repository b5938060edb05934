#include "daemon/controller.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "alloc/registry.h"
#include "core/hostlist.h"
#include "daemon/job_spec.h"
#include "daemon/log.h"
#include "sched/gang/registry.h"
#include "sched/registry.h"

namespace trellis {
namespace {

constexpr std::string_view kNodePrefix = "n";

std::string user_name(int uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwuid_r(static_cast<uid_t>(uid), &entry, buffer, sizeof buffer, &found) == 0 && found)
    return entry.pw_name;
  return std::to_string(uid);
}

// The reservations a batch policy keeps between passes, as the store's opaque core state.
std::string reservations_to_text(const std::vector<Reservation>& reservations) {
  nlohmann::json out = nlohmann::json::array();
  for (const Reservation& r : reservations) {
    std::vector<NodeId> nodes;
    r.nodes.for_each([&](NodeId n) { nodes.push_back(n); });
    out.push_back({{"job", r.job}, {"start", r.start}, {"nodes", nodes}});
  }
  return out.dump();
}

// Reads reservations back, keeping only those of jobs still pending; anything malformed is
// dropped (a reservation is a promise the next pass remakes, never needed for correctness).
std::vector<Reservation> reservations_from_json(const nlohmann::json& parsed, int node_count,
                                                const std::map<JobId, StoredJob>& pending) {
  std::vector<Reservation> out;
  if (!parsed.is_array()) return out;
  for (const nlohmann::json& item : parsed) {
    if (!item.is_object() || !item["job"].is_number_integer() || !item["start"].is_number() ||
        !item["nodes"].is_array())
      continue;
    Reservation r;
    r.job = item["job"].get<JobId>();
    r.start = item["start"].get<double>();
    r.nodes = NodeSet(node_count);
    bool valid = pending.count(r.job) > 0;
    for (const nlohmann::json& n : item["nodes"]) {
      if (!n.is_number_integer() || n.get<long>() < 0 || n.get<long>() >= node_count) {
        valid = false;
        break;
      }
      r.nodes.set(static_cast<NodeId>(n.get<long>()));
    }
    if (valid) out.push_back(std::move(r));
  }
  return out;
}

// A suspended job's frozen time, as a queue policy's core_state keeps it (Controller::
// batch_state_text()).
struct SavedFreeze {
  int attempt = 0;
  bool frozen = false;
  Seconds frozen_since = 0;
  Seconds frozen_before = 0;
};

// A queue policy's core_state: the reservations alone (an array: the format before suspensions,
// and still when no running job has been suspended), or with the frozen times of running jobs
// ({"reservations": [...], "frozen": [...]}). Malformed entries are dropped.
struct SavedBatchState {
  std::vector<Reservation> reservations;
  std::map<JobId, SavedFreeze> frozen;
};

SavedBatchState batch_state_from_text(const std::string& text, int node_count,
                                      const std::map<JobId, StoredJob>& pending) {
  SavedBatchState saved;
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    saved.reservations = reservations_from_json(parsed, node_count, pending);
    return saved;
  }
  if (parsed.contains("reservations"))
    saved.reservations = reservations_from_json(parsed["reservations"], node_count, pending);
  if (!parsed.contains("frozen") || !parsed["frozen"].is_array()) return saved;
  for (const nlohmann::json& item : parsed["frozen"]) {
    if (!item.is_object() || !item["job"].is_number_integer() ||
        !item["attempt"].is_number_integer() || !item["frozen"].is_boolean() ||
        !item["since"].is_number() || !item["before"].is_number())
      continue;
    SavedFreeze f;
    f.attempt = item["attempt"].get<int>();
    f.frozen = item["frozen"].get<bool>();
    f.frozen_since = item["since"].get<double>();
    f.frozen_before = std::max(0.0, item["before"].get<double>());
    saved.frozen[item["job"].get<JobId>()] = f;
  }
  return saved;
}

// Whether a "state" event's detail (set_job_state()'s "FROM -> TO: reason") is an
// administrator's suspend or resume.
bool is_suspension_event(std::string_view detail) {
  const std::string suspended = std::string(state_name(JobState::kRunning)) + " -> " +
                                std::string(state_name(JobState::kSuspended));
  const std::string resumed = std::string(state_name(JobState::kSuspended)) + " -> " +
                              std::string(state_name(JobState::kRunning));
  return detail.starts_with(suspended) || detail.starts_with(resumed);
}

std::vector<NodeId> ids_of(const NodeSet& nodes) {
  std::vector<NodeId> ids;
  nodes.for_each([&](NodeId n) { ids.push_back(n); });
  return ids;
}

}  // namespace

Controller::Controller(const ClusterConfig& config, StateStore& store, AgentLink& agents,
                       Machine machine)
    : config_(config), store_(store), agents_(agents), machine_(std::move(machine)) {}

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
  const Machine& m = c->machine_;
  // A gang policy's partitions run along the buddy allocator's curve unless another is named.
  std::string allocator_name = !config.controller.allocator.empty() ? config.controller.allocator
                               : gang::GangPolicyRegistry::builtin().find(config.controller.policy)
                                   ? "buddy"
                                   : default_allocator_for(m);
  Result<std::unique_ptr<Allocator>> allocator =
      AllocatorRegistry::builtin().create(allocator_name, m);
  if (!allocator) return fail("[controller] allocator: " + allocator.error().message);
  c->allocator_ = std::move(*allocator);
  Result<bool> gang = c->open_gang();
  if (!gang) return gang.error();
  if (!*gang) {
    Result<std::unique_ptr<QueuePolicy>> policy =
        PolicyRegistry::builtin().create(config.controller.policy, m);
    if (!policy) return fail("[controller] policy: " + policy.error().message);
    c->policy_ = std::move(*policy);
    auto batch = std::make_unique<BatchCore>(c->machine_, *c->allocator_, *c->policy_);
    c->batch_ = batch.get();
    c->core_ = std::move(batch);
  }

  std::vector<std::string> names;
  for (NodeId n = 0; n < m.node_count(); ++n) names.push_back(c->node_name(n));
  if (Status ok = store.init_cluster(m.spec(), names); !ok) return ok.error();
  // The memory is read now, so that a store that cannot be read fails the start; launches are
  // sent again only by the controller that takes the scheduler lease (sync()).
  if (Status ok = c->rebuild(now, /*relaunch=*/false); !ok) return ok.error();
  return c;
}

std::string Controller::node_name(NodeId node) const {
  return std::string(kNodePrefix) + std::to_string(node);
}

Result<NodeId> Controller::node_id(std::string_view name) const {
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
  job.request = s.request;
  job.share = s.share;
  job.user = s.uid;
  job.group = s.gid;
  job.name = s.name;
  return job;
}

Status Controller::rebuild(Seconds now, bool relaunch) {
  const int n = machine_.node_count();
  synced_version_ = -1;
  // Where the store is, read first: a change committed while the rest is read is replayed by the
  // next sync() (replaying what is in memory already changes nothing).
  Result<StoreHead> head = store_.head();
  if (!head) return head.error();
  Result<std::vector<StoredNode>> nodes = store_.list_nodes();
  if (!nodes) return nodes.error();
  agent_of_.assign(n, "");
  // Every agent gets its full heartbeat window after a restart; later rebuilds keep what this
  // controller has heard and add what others recorded.
  if (static_cast<int>(last_seen_.size()) != n) last_seen_.assign(n, now);
  up_.assign(n, false);
  drained_.assign(n, false);
  for (const StoredNode& node : *nodes) {
    if (node.id < 0 || node.id >= n) continue;
    agent_of_[node.id] = node.agent;
    up_[node.id] = node.up;
    drained_[node.id] = node.drained;
    last_seen_[node.id] = std::max(last_seen_[node.id], node.last_heartbeat);
  }

  JobQuery active;
  active.only_active = true;
  Result<std::vector<StoredJob>> jobs = store_.list_jobs(active);
  if (!jobs) return jobs.error();
  CoreSnapshot snapshot;
  snapshot.down = NodeSet(n);
  // A gang core keeps every node in its partition tree (GangCore::node_down).
  for (NodeId id = 0; id < n && !gang_; ++id)
    if (!up_[id] || drained_[id]) snapshot.down.set(id);
  snapshot.last_pass = now;
  running_.clear();
  pending_.clear();
  admin_suspended_.clear();
  leaving_rotation_.clear();
  for (const StoredJob& job : *jobs)
    if (job.state == JobState::kPending) pending_[job.id] = job;
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
      snapshot.queue.push_back(core_job(job));
      continue;
    }
    LiveJob live;
    live.attempt = job.attempt;
    live.start = job.start_time;
    live.limit_at = job.start_time + job.time_limit;
    live.nodes = job.nodes;
    live.stop = job.stop;
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
    snapshot.running.push_back(std::move(r));
    snapshot.running_jobs.push_back(core_job(job));
    running_[job.id] = std::move(live);
    relaunch_jobs.push_back(&job);
  }
  if (gang_) {
    if (Status ok = restore_gang(snapshot, *state ? **state : "", now); !ok) return ok;
  } else {
    snapshot.reservations = std::move(saved.reservations);
    if (Status ok = core_->restore(snapshot); !ok)
      return fail(Error::Code::kInternal,
                  "rebuilding the scheduler from the store: " + ok.error().message);
    // The agents may have missed the freeze: the scheduler tells them again (restore_gang() tells
    // them the whole state).
    if (scheduler_ && !suspended.empty()) send_switch(suspended, {}, now);
  }
  notes_.clear();
  for (const auto& [id, job] : pending_)
    notes_[id] = PendingNote{id, job.reason, job.expected_start};
  synced_version_ = head->version;
  synced_event_ = head->last_event;
  finished_.clear();
  // Reconciliation: a launch that never reached its agent is delivered now; one that did is a
  // no-op there (same job and attempt), and an agent re-reports a task that has ended.
  if (relaunch) {
    for (const StoredJob* job : relaunch_jobs) {
      send_launch(*job, job->attempt, job->nodes);
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
  if (!scheduler_) {
    synced_version_ = -1;  // another controller schedules; this one keeps no memory of jobs
    return Ok{};
  }
  Result<StoreHead> head = store_.head();
  if (!head) return head.error();
  if (head->version == synced_version_ && head->last_event == synced_event_) return Ok{};
  // Catching up: every event after the memory's, this controller's own included (already in
  // memory, so replaying them changes nothing). A long way behind, reading everything is faster.
  constexpr int kMostReplayed = 5000;
  Result<std::vector<StoredEvent>> events = store_.events(synced_event_, kMostReplayed + 1);
  if (!events) return events.error();
  if (static_cast<int>(events->size()) > kMostReplayed) return rebuild(now, /*relaunch=*/false);
  // The rows of the jobs the events need, in one read.
  JobQuery needed;
  for (const StoredEvent& event : *events) {
    bool submitted = event.kind == "submit" && !pending_.count(event.job) &&
                     !running_.count(event.job) && !finished_.count(event.job);
    bool ended = (event.kind == "end" || event.kind == "requeue") && running_.count(event.job);
    bool suspension =
        event.kind == "state" && running_.count(event.job) && is_suspension_event(event.detail);
    if (submitted || ended || suspension) needed.ids.push_back(event.job);
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
  return Ok{};
}

Result<bool> Controller::replay(const StoredEvent& event, const std::map<JobId, StoredJob>& rows,
                                Seconds now) {
  const JobId id = event.job;
  auto row = rows.find(id);
  const StoredJob* job = row == rows.end() ? nullptr : &row->second;
  if (event.kind == "submit") {
    if (pending_.count(id) || running_.count(id) || finished_.count(id)) return true;
    if (!job) return false;
    if (is_final(job->state)) return true;               // ended before this controller saw it
    if (job->state != JobState::kPending) return false;  // started by another scheduler
    // It joins the queue now, when this scheduler learns of it, as a job submitted here does.
    if (!core_->submit(core_job(*job), now)) return false;
    pending_[id] = *job;
    pass_wanted_ = true;
    return true;
  }
  if (event.kind == "start") return running_.count(id) > 0 || finished_.count(id) > 0;
  if (event.kind == "end" || event.kind == "requeue") {
    auto live = running_.find(id);
    if (live == running_.end()) return true;  // ended in memory already
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
    } else if (auto live = running_.find(id); live != running_.end()) {
      if (event.detail.ends_with("COMPLETING: cancelled")) {
        if (live->second.stop == StopCause::kNone) live->second.stop = StopCause::kCancel;
      } else if (event.detail.ends_with("COMPLETING: time limit reached")) {
        if (live->second.stop == StopCause::kNone) live->second.stop = StopCause::kTimeout;
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
    Result<NodeId> node = node_id(event.node);
    if (!node) return false;
    const NodeId n = *node;
    bool was_in_service = up_[n] && !drained_[n];
    if (event.kind == "node_up") up_[n] = true;
    if (event.kind == "node_down") up_[n] = false;
    if (event.kind == "drain") drained_[n] = true;
    if (event.kind == "resume") drained_[n] = false;
    bool in_service = up_[n] && !drained_[n];
    if (in_service && !was_in_service) (void)core_->node_up(n, now);
    if (!in_service && was_in_service) (void)core_->node_down(n, now);
    if (event.kind == "node_up" && !event.detail.empty()) agent_of_[n] = event.detail;
    pass_wanted_ = true;
    return true;
  }
  return event.kind == "scheduler";  // anything else: read it all again
}

bool Controller::is_scheduler() const {
  std::lock_guard lock(mutex_);
  return scheduler_;
}

void Controller::resign() {
  std::lock_guard lock(mutex_);
  if (!scheduler_) return;
  (void)store_.release_lease(identity_);
  scheduler_ = false;
  synced_version_ = -1;
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

Result<JobId> Controller::submit(const v1::JobSpec& spec, const Caller& caller, Seconds now) {
  Result<StoredJob> checked = job_from_spec(spec, machine_, config_.controller);
  if (!checked) return checked.error();
  StoredJob job = std::move(*checked);
  if (gang_ && job.request.has_shape())
    return fail("gang policy '" + config_.controller.policy +
                "' runs jobs on partitions along the node order, not on boxes: ask for a node "
                "count (--nodes) instead of a shape");
  if (Status fits = allocator_->check(job.request); !fits) return fits.error();
  job.uid = caller.uid;
  job.gid = caller.gid;
  job.user = user_name(caller.uid);

  std::lock_guard lock(mutex_);
  Result<JobId> id = store_.add_job(job, now);
  if (!id) return id.error();
  pass_wanted_ = true;
  if (!tracking()) return *id;  // the scheduler reads it from the store
  job.id = *id;
  job.submit_time = now;
  gang_log_dirty_ = true;
  if (Status queued = core_->submit(core_job(job), now); !queued) {
    // The allocator accepted the request above, so this is a broken invariant; the stored job
    // must not wait forever.
    (void)store_.set_job_state(job.id, JobState::kFailed, queued.error().message, now);
    return fail(Error::Code::kInternal,
                "queueing job " + std::to_string(job.id) + ": " + queued.error().message);
  }
  pending_[job.id] = std::move(job);
  return *id;
}

Result<std::vector<JobId>> Controller::cancel(const std::vector<JobId>& ids, int signal,
                                              const Caller& caller, Seconds now) {
  if (ids.empty()) return fail("job_ids: give at least one job id");
  if (signal < 0 || signal > 64)
    return fail("signal: " + std::to_string(signal) + " is not a signal");
  std::lock_guard lock(mutex_);
  // Every id is checked before anything changes, so a refused call changes nothing.
  std::vector<StoredJob> targets;
  for (JobId id : ids) {
    Result<StoredJob> job = store_.job(id);
    if (!job) return fail(Error::Code::kNotFound, "job " + std::to_string(id) + " does not exist");
    if (job->uid != caller.uid && !is_admin(caller))
      return fail(Error::Code::kPermissionDenied,
                  "permission denied: job " + std::to_string(id) + " belongs to " + job->user);
    targets.push_back(std::move(*job));
  }
  std::vector<JobId> acted;
  for (const StoredJob& job : targets) {
    if (is_final(job.state)) continue;
    if (signal != 0) {  // delivered only, to a job that runs
      if (job.state == JobState::kPending) continue;
      send_signal(job.id, job.attempt, job.nodes, signal);
      acted.push_back(job.id);
      continue;
    }
    // The store decides from the job's state at the commit: another controller may have started
    // or ended it since it was read above.
    Result<JobState> after = store_.stop_job(job.id, 0, StopCause::kCancel, "cancelled", now);
    if (!after) return after.error();
    if (*after == JobState::kCancelled) {
      if (tracking() && pending_.count(job.id)) {
        (void)core_->cancel(job.id, now);
        gang_log_dirty_ = true;
        pending_.erase(job.id);
        notes_.erase(job.id);
        finished_.insert(job.id);
      }
      pass_wanted_ = true;
      acted.push_back(job.id);
    } else if (*after == JobState::kCompleting) {
      Result<StoredJob> stopping = store_.job(job.id);
      if (!stopping) return stopping.error();
      if (tracking())
        if (auto live = running_.find(job.id); live != running_.end())
          live->second.stop = StopCause::kCancel;
      send_signal(job.id, stopping->attempt, stopping->nodes, 0);
      acted.push_back(job.id);
    }
  }
  return acted;
}

Result<std::vector<JobId>> Controller::suspend(const std::vector<JobId>& ids, const Caller& caller,
                                               Seconds now) {
  return set_suspended(ids, true, caller, now);
}

Result<std::vector<JobId>> Controller::resume(const std::vector<JobId>& ids, const Caller& caller,
                                              Seconds now) {
  return set_suspended(ids, false, caller, now);
}

Result<std::vector<JobId>> Controller::set_suspended(const std::vector<JobId>& ids, bool suspend,
                                                     const Caller& caller, Seconds now) {
  if (!is_admin(caller))
    return fail(Error::Code::kPermissionDenied,
                "permission denied: only administrators suspend and resume jobs, and uid " +
                    std::to_string(caller.uid) + " is not one");
  if (ids.empty()) return fail("job_ids: give at least one job id");
  const JobState from = suspend ? JobState::kRunning : JobState::kSuspended;
  const JobState to = suspend ? JobState::kSuspended : JobState::kRunning;
  std::lock_guard lock(mutex_);
  // Every id is checked before anything changes, so a refused call changes nothing. The store is
  // the truth: a job suspended through another controller is S there, whatever this one holds.
  std::vector<JobId> targets;
  std::set<JobId> seen;
  for (JobId id : ids) {
    Result<StoredJob> job = store_.job(id);
    if (!job) return fail(Error::Code::kNotFound, "job " + std::to_string(id) + " does not exist");
    if (!seen.insert(id).second || job->state == to) continue;  // left as it is
    if (job->state != from)
      return fail("job " + std::to_string(id) + " is " + std::string(state_letter(job->state)) +
                  (suspend ? ": only a running job can be suspended"
                           : ": only a suspended job can be resumed"));
    targets.push_back(id);
  }
  std::vector<JobId> acted;
  for (JobId id : targets) {
    if (Status ok =
            store_.set_job_state(id, to, suspend ? "suspended by an administrator" : "", now);
        !ok)
      return ok.error();
    // The scheduler freezes or thaws it; another controller leaves that to the scheduler, which
    // replays the change (replay()).
    if (tracking()) {
      if (suspend)
        apply_suspend(id, now);
      else
        apply_resume(id, now);
    }
    acted.push_back(id);
  }
  pass_wanted_ = true;
  return acted;
}

Result<std::vector<JobId>> Controller::run_pass(Seconds now) {
  std::lock_guard lock(mutex_);
  if (Status ok = sync(now); !ok) return ok.error();
  if (!scheduler_) return std::vector<JobId>{};
  pass_wanted_ = false;
  PassResult decided = core_->pass(now);
  PassCommit commit;
  commit.scheduler = identity_;
  std::vector<JobId> started;
  for (const CoreDecision& d : decided.decisions) {
    if (d.kind != CoreDecision::Kind::kStart) continue;
    auto job = pending_.find(d.job);
    if (job == pending_.end()) continue;
    JobStart start;
    start.job = d.job;
    start.attempt = job->second.attempt + 1;
    start.nodes = ids_of(d.nodes);
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
  if (!gang_) {
    std::string batch_state = batch_state_text();
    if (batch_state != reservations_text_) commit.core_state = batch_state;
  }
  if (commit.starts.empty() && commit.notes.empty() && !commit.core_state) {
    if (gang_) switch_jobs(decided, now);
    return started;
  }
  if (Status ok = store_.commit_pass(commit, now); !ok) {
    // Nothing was committed: the core must forget the starts too, or it would believe nodes are
    // held that the store says are free. Rebuilding from the store is the one way back.
    Status rebuilt = rebuild(now, /*relaunch=*/false);
    if (!rebuilt) return rebuilt.error();
    return ok.error();
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
    auto job = pending_.find(start.job);
    StoredJob stored = std::move(job->second);
    pending_.erase(job);
    notes_.erase(start.job);
    stored.attempt = start.attempt;
    stored.state = JobState::kRunning;
    stored.start_time = now;
    stored.nodes = start.nodes;
    LiveJob live;
    live.attempt = start.attempt;
    live.start = now;
    live.limit_at = now + stored.time_limit;
    live.nodes = start.nodes;
    running_[start.job] = std::move(live);
    // Launched even when another controller's change came in between: the start is committed.
    send_launch(stored, start.attempt, start.nodes);
    started.push_back(start.job);
  }
  if (gang_) switch_jobs(decided, now);
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
  // Called at every pass over the whole queue: a note is built only when it changed.
  for (const Job* job : batch_->queue()) {
    std::string_view reason = first ? "Resources" : "Priority";
    std::string shaped;
    if (first && job->request.has_shape()) {
      shaped = "Resources (no free " + format_shape(job->request.shape) + " box yet)";
      reason = shaped;
    }
    first = false;
    Seconds expected_start = 0;
    if (auto p = promised.find(job->id); p != promised.end())
      expected_start = std::max(now, p->second);
    note(job->id, reason, expected_start);
  }
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
  for (size_t rank = 0; rank < nodes.size(); ++rank)
    (*request.mutable_node_ids())[node_name(nodes[rank])] = static_cast<int>(rank);
  for (const std::string& arg : job.argv) request.add_argv(arg);
  request.set_cwd(job.cwd);
  request.set_output(resolve_output_path(job.output, job.id));
  request.set_error(resolve_output_path(job.error, job.id));
  for (const auto& [key, value] : job.env) (*request.mutable_env())[key] = value;
  request.set_uid(job.uid);
  request.set_gid(job.gid);
  request.set_time_limit(job.time_limit);
  return request;
}

void Controller::send_launch(const StoredJob& job, int attempt, const std::vector<NodeId>& nodes) {
  // One request per agent, holding the nodes it serves.
  std::map<std::string, std::vector<NodeId>> by_agent;
  for (NodeId node : nodes) by_agent[agent_of_[node]].push_back(node);
  v1::LaunchRequest request = launch_request(job, attempt, nodes);
  for (const auto& [agent, its_nodes] : by_agent) {
    if (agent.empty()) continue;  // never registered: the node is down and the job will requeue
    request.clear_nodes();
    for (NodeId node : its_nodes) request.add_nodes(node_name(node));
    agents_.launch(agent, request);
  }
}

std::set<std::string> Controller::agents_of(const std::vector<NodeId>& nodes) {
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
  std::set<std::string> agents;
  for (NodeId node : nodes)
    if (node >= 0 && node < machine_.node_count() && !agent_of_[node].empty())
      agents.insert(agent_of_[node]);
  return agents;
}

void Controller::send_signal(JobId id, int attempt, const std::vector<NodeId>& nodes, int signal) {
  std::set<std::string> agents = agents_of(nodes);
  v1::SignalRequest request;
  request.set_job_id(id);
  request.set_attempt(attempt);
  request.set_signal(signal);
  request.set_grace_seconds(config_.controller.kill_grace);
  for (const std::string& agent : agents) agents_.signal(agent, request);
}

Status Controller::finish(JobId id, int attempt, JobState state, std::string reason, Seconds now) {
  Result<bool> ended = store_.end_job({id, attempt, state, 0, 0, std::move(reason)}, now);
  if (!ended) return ended.error();
  if (!*ended) return Ok{};  // that attempt was over already
  return apply_end(id, state, now);
}

Status Controller::apply_end(JobId id, JobState state, Seconds now) {
  pass_wanted_ = true;
  if (!tracking()) return Ok{};
  (void)core_->ended(id, now);
  gang_log_dirty_ = true;
  // The time it spent frozen outlives the controller's count of it (`show job` after the end).
  if (auto live = running_.find(id); live != running_.end() && state != JobState::kPending) {
    Seconds frozen = frozen_seconds(id, now);
    if (frozen > 0) {
      if (Status s = store_.record_frozen_time(id, live->second.attempt, frozen); !s)
        log_line("job " + std::to_string(id) +
                 ": its frozen time was not recorded: " + s.error().message);
    }
  }
  running_.erase(id);
  admin_suspended_.erase(id);
  leaving_rotation_.erase(id);
  if (state != JobState::kPending) finished_.insert(id);
  if (state == JobState::kPending) {
    Result<StoredJob> again = store_.job(id);
    if (!again) return again.error();
    (void)core_->submit(core_job(*again), now);
    pending_[id] = std::move(*again);
  }
  return Ok{};
}

Status Controller::launch_failed(JobId id, int attempt, const Error& error, Seconds now) {
  std::lock_guard lock(mutex_);
  Result<StoredJob> job = store_.job(id);
  if (!job) return job.error();
  bool holds = job->state == JobState::kRunning || job->state == JobState::kSuspended ||
               job->state == JobState::kCompleting;
  if (!holds || job->attempt != attempt) return Ok{};  // already over
  send_signal(id, attempt, job->nodes, SIGKILL);       // whatever started on other agents
  bool retry = error.code != Error::Code::kInvalidArgument && attempt < kLaunchAttempts;
  std::string reason = "launch failed: " + error.message;
  if (retry) reason += " (requeued)";
  return finish(id, attempt, retry ? JobState::kPending : JobState::kFailed, reason, now);
}

JobEnd Controller::end_rule(JobId id, int attempt, StopCause stop, int exit_code,
                            int signal) const {
  JobEnd end{id, attempt, JobState::kCompleted, exit_code, signal, ""};
  switch (stop) {
    case StopCause::kCancel:
      end.state = JobState::kCancelled;
      end.reason = "cancelled";
      break;
    case StopCause::kTimeout:
      end.state = JobState::kTimeout;
      end.reason = "time limit reached";
      break;
    case StopCause::kNone:
      if (exit_code != 0 || signal != 0) {
        end.state = JobState::kFailed;
        end.reason = signal != 0 ? "killed by signal " + std::to_string(signal)
                                 : "exit code " + std::to_string(exit_code);
      }
      break;
  }
  return end;
}

Status Controller::report_exits(const v1::ExitRequest& request, const Caller& caller, Seconds now) {
  if (!is_agent(caller))
    return fail(Error::Code::kPermissionDenied,
                "permission denied: only the daemon user's agents report exits");
  std::vector<TaskExit> exits;
  for (const v1::TaskStatus& task : request.tasks()) {
    if (task.running()) continue;
    Result<NodeId> node = node_id(task.node());
    if (!node) continue;  // not one of this cluster's: nothing of ours ran there
    exits.push_back({task.job_id(), task.attempt(), *node, task.exit_code(), task.signal()});
  }
  if (exits.empty()) return Ok{};
  std::lock_guard lock(mutex_);
  // Any controller may hear any agent: the store counts the nodes that have reported, and ends
  // the job with the last one, in one transaction.
  Result<std::vector<JobEnd>> ended = store_.record_exits(
      exits,
      [this](JobId id, int attempt, StopCause stop, int exit_code, int signal) {
        return end_rule(id, attempt, stop, exit_code, signal);
      },
      now);
  if (!ended) return ended.error();
  for (const JobEnd& end : *ended)
    if (Status ok = apply_end(end.job, end.state, now); !ok) return ok;
  return Ok{};
}

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
  std::vector<NodeId> ids = ids_of(*nodes);
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

bool Controller::pass_due(Seconds now) const {
  std::lock_guard lock(mutex_);
  std::optional<Seconds> promised = core_->next_wakeup();
  if (promised && *promised <= now) return true;
  if (!pass_wanted_) return false;
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
  const Seconds window =
      config_.controller.heartbeat_interval * config_.controller.heartbeat_misses;
  for (NodeId id = 0; id < machine_.node_count(); ++id)
    if (up_[id]) earliest(last_seen_[id] + window);
  return wake;
}

}  // namespace trellis

namespace trellis {

Result<v1::ListJobsReply> Controller::list_jobs(const v1::ListJobsRequest& request, Seconds now) {
  JobQuery query;
  for (int64_t id : request.job_ids()) query.ids.push_back(id);
  for (int state : request.states()) {
    Result<JobState> s = from_proto(static_cast<v1::JobState>(state));
    if (!s) return s.error();
    query.states.push_back(*s);
  }
  if (request.has_uid()) query.uid = request.uid();
  // As squeue: without states or ids, the jobs still in the system.
  query.only_active = query.states.empty() && query.ids.empty() && !request.all_states();
  Result<std::vector<StoredJob>> jobs = store_.list_jobs(query);
  if (!jobs) return jobs.error();
  v1::ListJobsReply reply;
  std::lock_guard lock(mutex_);
  for (const StoredJob& job : *jobs) {
    v1::JobInfo* info = reply.add_jobs();
    *info = job_info(job, machine_.node_count());
    info->set_partition(-1);
    // An administrator's suspension is stored (S), so every controller shows it.
    info->set_admin_suspended(job.state == JobState::kSuspended);
    if (gang_)
      if (auto at = gang_->partition_of(job.id)) info->set_partition(at->first);
    auto live = running_.find(job.id);
    if (live == running_.end() || live->second.attempt != job.attempt) continue;
    info->set_seconds_frozen(frozen_seconds(job.id, now));
    info->set_idle(live->second.idle);
    // The store keeps R for a time-shared job; whether it is frozen now is the controller's.
    if (job.state == JobState::kRunning && live->second.frozen) info->set_state(v1::SUSPENDED);
  }
  return reply;
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
