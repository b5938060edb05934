#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "core/job_array.h"
#include "core/resource_request.h"
#include "core/task_layout.h"
#include "daemon/controller.h"
#include "daemon/job_spec.h"
#include "daemon/log.h"
#include "daemon/user_names.h"

// The job lifecycle: submission, cancel, suspension, how an attempt ends (exit reports, launch
// failures) and the job listing.

namespace trellis {

std::optional<int> Controller::packed_node_count(const v1::JobSpec& spec) const {
  if (spec.nodes() != 0 || spec.ntasks() <= 1 || spec.ntasks_per_node() != 0 ||
      spec.shape_size() != 0)
    return std::nullopt;
  const PartitionConfig* partition = nullptr;
  for (const PartitionConfig& p : partitions_)
    if (spec.partition().empty() ? p.is_default : p.name == spec.partition()) partition = &p;
  if (!partition || !partition->shared) return std::nullopt;
  // What job_from_spec reads too; a request that does not read is its error to report.
  Result<ResourceRequest> resources = decode_resource_request(spec.resources());
  Result<Distribution> distribution = parse_distribution(spec.distribution());
  if (!resources || !distribution || resources->sharing == NodeSharing::kExclusive)
    return std::nullopt;
  StoredJob probe;
  probe.resources = *resources;
  probe.tasks.ntasks = spec.ntasks();
  probe.tasks.distribution = *distribution;
  auto nodes = partition_nodes_.find(partition->name);
  const int fewest = node_types_.fewest_nodes(
      probe, nodes == partition_nodes_.end() ? nullptr : nodes->second.get());
  if (fewest == 0) return std::nullopt;  // none holds them: the usual checks say why
  return fewest;
}

Result<JobId> Controller::submit(const v1::JobSpec& spec, const Caller& caller, Seconds now,
                                 std::vector<JobId>* task_ids) {
  // Tasks without a node count: on a partition of shared nodes onto the fewest nodes that hold
  // them, as Slurm's select/cons_tres does; elsewhere one node per task.
  std::optional<v1::JobSpec> packed;
  if (std::optional<int> nodes = packed_node_count(spec)) {
    packed = spec;
    packed->set_nodes(*nodes);
  }
  Result<StoredJob> checked = job_from_spec(packed ? *packed : spec, machine_, config_.controller);
  if (!checked) return checked.error();
  StoredJob job = std::move(*checked);
  if (gang_ && job.request.has_shape())
    return fail("gang policy '" + config_.controller.policy +
                "' runs jobs on partitions along the node order, not on boxes: ask for a node "
                "count (--nodes) instead of a shape");
  if (pads_counts_ && job.request.mode == PlacementMode::kNonContiguous)
    return fail("mode any: the cluster's allocator '" + allocator_name_ +
                "' places every job as one box, so it cannot give a job scattered nodes; leave "
                "--mode unset (a count no box holds is rounded up to the smallest box that does) "
                "or ask for --shape");
  if (Result<std::string> partition = partition_of(spec.partition(), spec.time_limit() > 0, job);
      !partition)
    return partition.error();
  if (gang_ && partition_nodes_.at(job.partition))
    return fail("partition: gang policy '" + config_.controller.policy +
                "' time-shares the whole machine; partition " + job.partition +
                " holds only some of its nodes");
  if (Status fits = allocator_->check(core_job(job).request); !fits) return fits.error();
  if (Status fits =
          node_types_.check_fits(job, partition_nodes_.at(job.partition).get(), job.partition);
      !fits)
    return fits.error();
  ArraySpec array;
  if (!spec.array().empty()) {
    Result<ArraySpec> parsed = parse_array_spec(spec.array(), config_.controller.max_array_size);
    if (!parsed) return fail("array: " + parsed.error().message);
    array = std::move(*parsed);
    job.array_limit = array.limit;
  }
  job.uid = caller.uid;
  job.gid = caller.gid;
  job.user = user_name(caller.uid);
  const int adding = array.tasks.empty() ? 1 : static_cast<int>(array.tasks.size());
  if (Status charged =
          charge_job(job, spec.account(), spec.qos(), spec.time_limit() > 0, adding, now);
      !charged)
    return charged.error();
  // Under concurrent allocation this controller places the jobs it was given.
  if (concurrent_) job.owner = identity_;
  // An array (stored in one transaction of its own) and a job with a dependency (whose jobs are
  // checked first) are committed apart; the others with the submissions that arrive meanwhile,
  // in one transaction.
  if (!array.tasks.empty() || !job.dependency.empty())
    return submit_apart(std::move(job), array.tasks, now, task_ids);
  Result<JobId> id = submissions_.run(Submission{std::move(job), now});
  if (id && task_ids) *task_ids = {*id};
  return id;
}

std::vector<Result<JobId>> Controller::commit_submissions(std::vector<Submission>& batch) {
  Seconds now = 0;
  std::vector<StoredJob> jobs;
  for (Submission& s : batch) {
    now = std::max(now, s.now);
    jobs.push_back(s.job);
  }
  CommittedSubmissions committed;
  {
    std::lock_guard lock(committed_mutex_);
    committed.epoch = ++submission_epoch_;
    outstanding_epochs_.insert(committed.epoch);
  }
  // Committed without mutex_ (see controller.h); the jobs join memory through the inbox.
  std::vector<Result<JobId>> out;
  Result<std::vector<JobId>> ids = store_.add_jobs(jobs, now);
  if (!ids && batch.size() > 1 && ids.error().code == Error::Code::kInvalidArgument) {
    // One job the store refuses: each is committed on its own, and gets its own answer.
    for (Submission& s : batch) out.push_back(store_.add_job(s.job, s.now));
  } else {
    for (size_t i = 0; i < batch.size(); ++i)
      out.push_back(ids ? Result<JobId>((*ids)[i]) : Result<JobId>(ids.error()));
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!out[i]) continue;
    committed.jobs.push_back(std::move(batch[i].job));
    committed.ids.push_back(*out[i]);
    committed.at.push_back(ids ? now : batch[i].now);
  }
  {
    std::lock_guard lock(committed_mutex_);
    submitted_inbox_.push_back(std::move(committed));  // even empty: its epoch ends there
  }
  if (mutex_.try_lock()) {
    std::lock_guard lock(mutex_, std::adopt_lock);
    apply_committed();
  }
  return out;
}

Result<JobId> Controller::apply_submitted(StoredJob job, JobId id, Seconds now) {
  pass_wanted_ = true;
  if (!tracking()) return id;  // the scheduler reads it from the store
  job.id = id;
  job.submit_time = now;
  if (!job.script.empty()) {  // in the store; read again at launch
    job.script.clear();
    job.script_id = job.array_job != 0 ? job.array_job : id;
  }
  // Into the core's queue, or waiting (a dependency, an array's limit: controller_waiting.cc).
  if (Status queued = enqueue(job, now); !queued) {
    // The allocator accepted the request above, so this is a broken invariant; the stored job
    // must not wait forever.
    (void)store_.set_job_state(job.id, JobState::kFailed, queued.error().message, now);
    return fail(Error::Code::kInternal,
                "queueing job " + std::to_string(job.id) + ": " + queued.error().message);
  }
  return id;
}

Result<JobId> Controller::submit_apart(StoredJob job, const std::vector<int>& tasks, Seconds now,
                                       std::vector<JobId>* task_ids) {
  auto lock = lock_memory();
  if (!job.dependency.empty())
    if (Status ok = check_dependency_targets(job.dependency); !ok) return ok.error();
  std::vector<JobId> ids;
  if (tasks.empty()) {
    Result<JobId> id = store_.add_job(job, now);
    if (!id) return id.error();
    ids.push_back(*id);
  } else {
    Result<std::vector<JobId>> added = store_.add_array(job, tasks, now);
    if (!added) return added.error();
    ids = std::move(*added);
  }
  if (task_ids) *task_ids = ids;
  for (size_t i = 0; i < ids.size(); ++i) {
    StoredJob task = job;
    if (!tasks.empty()) {
      task.array_job = ids.front();
      task.array_task = tasks[i];
    }
    if (Result<JobId> applied = apply_submitted(std::move(task), ids[i], now); !applied)
      return applied.error();
  }
  return ids.front();
}

Result<std::vector<JobId>> Controller::cancel(const std::vector<JobId>& ids, int signal,
                                              const Caller& caller, Seconds now, bool exact_ids) {
  if (ids.empty()) return fail("job_ids: give at least one job id");
  if (signal < 0 || signal > 64)
    return fail("signal: " + std::to_string(signal) + " is not a signal");
  auto lock = lock_memory();
  now = not_before_latest(now);
  // Every id is checked before anything changes, so a refused call changes nothing.
  // An array's id names every task of the array, as with scancel.
  std::vector<StoredJob> targets;
  std::set<JobId> seen;
  for (JobId id : ids) {
    JobQuery query;
    query.ids = {id};
    query.exact_ids = exact_ids;
    Result<std::vector<StoredJob>> jobs = store_.list_jobs(query);
    if (!jobs) return jobs.error();
    if (jobs->empty())
      return fail(Error::Code::kNotFound, "job " + std::to_string(id) + " does not exist");
    for (StoredJob& job : *jobs) {
      if (job.uid != caller.uid && !is_admin(caller))
        return fail(Error::Code::kPermissionDenied,
                    "permission denied: job " + std::to_string(job.id) + " belongs to " + job.user);
      if (seen.insert(job.id).second) targets.push_back(std::move(job));
    }
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
    // or ended it since it was read above. A job read with nodes is stopped only in the attempt
    // read, whose nodes are known then without a second read; in another attempt (requeued and
    // started again meanwhile) it is stopped in whichever it is in, and read again.
    const bool read_holding = job.state != JobState::kPending;
    Result<JobState> after = store_.stop_job(job.id, read_holding ? job.attempt : 0,
                                             StopCause::kCancel, "cancelled", now);
    if (!after) return after.error();
    bool same_attempt = read_holding;
    if (read_holding && *after != JobState::kCompleting && !is_final(*after)) {
      after = store_.stop_job(job.id, 0, StopCause::kCancel, "cancelled", now);
      if (!after) return after.error();
      same_attempt = false;
    }
    if (*after == JobState::kCancelled) {
      if (tracking() && pending_.count(job.id)) {
        (void)core_->cancel(job.id, now);
        gang_log_dirty_ = true;
        pending_.erase(job.id);
        notes_.erase(job.id);
        finished_.insert(job.id);
      } else if (tracking() && waiting_.erase(job.id)) {
        notes_.erase(job.id);
        finished_.insert(job.id);
      }
      pass_wanted_ = true;
      acted.push_back(job.id);
    } else if (*after == JobState::kCompleting) {
      StoredJob stopping = job;
      if (!same_attempt) {
        Result<StoredJob> read = store_.job(job.id);
        if (!read) return read.error();
        stopping = std::move(*read);
      }
      if (tracking())
        if (auto live = running_.find(job.id); live != running_.end())
          live->second.stop = StopCause::kCancel;
      send_signal(job.id, stopping.attempt, stopping.nodes, 0);
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
  auto lock = lock_memory();
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

Status Controller::finish(JobId id, int attempt, JobState state, std::string reason, Seconds now) {
  JobEnd end;
  end.job = id;
  end.attempt = attempt;
  end.state = state;
  end.reason = std::move(reason);
  return finish(end, now);
}

Status Controller::finish(const JobEnd& end, Seconds now) {
  Result<bool> ended = store_.end_job(end, now);
  if (!ended) return ended.error();
  if (!*ended) return Ok{};  // that attempt was over already
  return apply_end(end.job, end.state, now);
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
  if (auto live = running_.find(id); live != running_.end() && live->second.has_steps)
    end_job_steps(id, live->second.attempt, live->second.nodes, now);
  running_.erase(id);
  admin_suspended_.erase(id);
  leaving_rotation_.erase(id);
  if (state != JobState::kPending) finished_.insert(id);
  if (state == JobState::kPending) {
    Result<StoredJob> again = store_.job(id);
    if (!again) return again.error();
    if (!again->hold.empty()) return Ok{};  // held: out of the queue until released
    if (!places(*again)) return Ok{};       // another controller's to place again
    (void)core_->submit(core_job(*again), now);
    queued_since_pass_.push_back(id);
    pending_[id] = std::move(*again);
  }
  return Ok{};
}

Result<std::vector<JobId>> Controller::release(const std::vector<JobId>& ids, const Caller& caller,
                                               Seconds now) {
  if (ids.empty()) return fail("job_ids: give at least one job id");
  auto lock = lock_memory();
  // Every id is checked before anything changes, so a refused call changes nothing.
  for (JobId id : ids) {
    Result<StoredJob> job = store_.job(id);
    if (!job) return fail(Error::Code::kNotFound, "job " + std::to_string(id) + " does not exist");
    if (job->uid != caller.uid && !is_admin(caller))
      return fail(Error::Code::kPermissionDenied,
                  "permission denied: job " + std::to_string(id) + " belongs to " + job->user);
  }
  std::vector<JobId> released;
  for (JobId id : ids) {
    Result<bool> done = store_.release_job(id, now);
    if (!done) return done.error();
    if (!*done) continue;  // not held
    log_line("job " + std::to_string(id) + " released by uid " + std::to_string(caller.uid));
    released.push_back(id);
    pass_wanted_ = true;
    // the scheduler replays the release
    if (!tracking() || pending_.count(id) || waiting_.count(id)) continue;
    Result<StoredJob> job = store_.job(id);
    if (!job) return job.error();
    if (!places(*job)) continue;  // its owner replays the release
    // Into the core's queue, or to wait for its dependency or its array's room.
    if (Status queued = enqueue(*job, now); !queued)
      return fail(Error::Code::kInternal,
                  "queueing job " + std::to_string(id) + ": " + queued.error().message);
  }
  return released;
}

Status Controller::launch_failed(JobId id, int attempt, const Error& error, Seconds now) {
  auto lock = lock_memory();
  Result<StoredJob> job = store_.job(id);
  if (!job) return job.error();
  if (!holds_nodes(job->state) || job->attempt != attempt) return Ok{};  // already over
  send_signal(id, attempt, job->nodes, SIGKILL);  // whatever started on other agents
  bool retry = error.code != Error::Code::kInvalidArgument && attempt < kLaunchAttempts;
  std::string reason = "launch failed: " + error.message;
  if (retry) reason += " (requeued)";
  return finish(id, attempt, retry ? JobState::kPending : JobState::kFailed, reason, now);
}

Status Controller::report_exits(const v1::ExitRequest& request, const Caller& caller, Seconds now) {
  if (!is_agent(caller))
    return fail(Error::Code::kPermissionDenied,
                "permission denied: only the daemon user's agents report exits");
  std::vector<TaskExit> exits;
  std::vector<const v1::TaskStatus*> failures, step_tasks;
  std::map<std::pair<JobId, int>, std::string> refused;  // attempts whose node could not hold them
  for (const v1::TaskStatus& task : request.tasks()) {
    if (task.running()) continue;
    if (task.start_refused() && task.step() == 0) {
      refused.emplace(std::pair{task.job_id(), task.attempt()},
                      task.reason().empty() ? "its node could not hold it to its grant"
                                            : task.reason().substr(0, 1024));
      continue;
    }
    if (task.step() != 0) {
      step_tasks.push_back(&task);
      continue;
    }
    Result<NodeId> node = node_id(task.node());
    if (!node) continue;  // not one of this cluster's: nothing of ours ran there
    exits.push_back(
        {task.job_id(), task.attempt(), *node, task.exit_code(), task.signal(), usage_of(task)});
    // A task whose job went over its memory limit here fails the job even when the task itself
    // exited 0 (the OOM killer may have ended only a child of it), as in Slurm.
    if (task.exit_code() != 0 || task.signal() != 0 || task.out_of_memory())
      failures.push_back(&task);
  }
  // Not the job's fault: requeued as a launch that failed (at most kLaunchAttempts times).
  for (const auto& [attempt, why] : refused)
    if (Status requeued = launch_failed(attempt.first, attempt.second,
                                        Error{why, Error::Code::kUnavailable}, now);
        !requeued)
      return requeued;
  if (exits.empty() && step_tasks.empty()) return Ok{};
  // Steps and failures need the memory; plain exits are committed without it (below).
  if (!step_tasks.empty() || !failures.empty()) {
    auto lock = lock_memory();
    if (Status ok = record_step_exits(step_tasks, now); !ok) return ok;
    // A task that failed ends its job: the others are stopped now (SIGTERM, then SIGKILL after
    // the kill grace), and the job's reason names the first failure. A job already stopping (a
    // cancel, a time limit, an earlier failure) is left as it is: its tasks' deaths are those
    // kills, not failures, and need no store call each.
    std::set<std::pair<JobId, int>> looked_at;
    for (const v1::TaskStatus* task : failures) {
      if (!looked_at.insert({task->job_id(), task->attempt()}).second) continue;
      LiveJob* live = nullptr;
      if (tracking())
        if (auto found = running_.find(task->job_id());
            found != running_.end() && found->second.attempt == task->attempt())
          live = &found->second;
      if (live && live->stop != StopCause::kNone) continue;
      const bool out_of_memory = task->out_of_memory();
      const StopCause cause = out_of_memory ? StopCause::kOutOfMemory : StopCause::kFailed;
      const std::string reason = out_of_memory && !task->reason().empty()
                                     ? task->reason().substr(0, 1024)
                                     : failure_reason(*task);
      // The store says whether it was stopping already (its stop cause); the memory may be
      // behind, or not kept (a controller that does not schedule).
      Result<JobState> after = store_.stop_job(task->job_id(), task->attempt(), cause, reason, now);
      if (!after) return after.error();
      if (*after != JobState::kCompleting) continue;  // over, or in another attempt
      Result<StoredJob> stopping = store_.job(task->job_id());
      if (!stopping) return stopping.error();
      if (stopping->attempt != task->attempt() || stopping->stop != cause ||
          stopping->reason != reason)
        continue;  // stopping for another cause (or failure) already
      log_line("job " + std::to_string(task->job_id()) + " attempt " +
               std::to_string(task->attempt()) +
               (out_of_memory ? " ran out of memory: " : " failed: ") + reason +
               "; stopping its other tasks");
      if (live) live->stop = cause;
      send_signal(task->job_id(), task->attempt(), stopping->nodes, 0);
    }
  }
  if (exits.empty()) return Ok{};
  // Committed with the reports that arrive meanwhile, in one transaction.
  return exit_reports_.run(ExitReport{std::move(exits), now});
}

std::vector<Result<Ok>> Controller::commit_exit_reports(std::vector<ExitReport>& batch) {
  std::vector<TaskExit> exits;
  Seconds now = 0;
  for (ExitReport& report : batch) {
    now = std::max(now, report.now);
    exits.insert(exits.end(), report.exits.begin(), report.exits.end());
  }
  now = not_before_latest(now);
  // Any controller may hear any agent: the store counts the nodes that have reported, and ends
  // the job with the last one, in one transaction, committed without mutex_ (see controller.h).
  Result<std::vector<JobEnd>> ended = store_.record_exits(exits, now);
  if (!ended) return std::vector<Result<Ok>>(batch.size(), ended.error());
  {
    std::lock_guard lock(committed_mutex_);
    ended_inbox_.push_back({std::move(*ended), now});
  }
  if (mutex_.try_lock()) {
    std::lock_guard lock(mutex_, std::adopt_lock);
    apply_committed();
  }
  return std::vector<Result<Ok>>(batch.size(), Ok{});
}

std::unique_lock<std::mutex> Controller::lock_memory() {
  std::unique_lock lock(mutex_);
  apply_committed();
  return lock;
}

int64_t Controller::outstanding_epoch() const {
  std::lock_guard lock(committed_mutex_);
  return outstanding_epochs_.empty() ? -1 : submission_epoch_;
}

bool Controller::apply_wanted(JobId id, int64_t epoch) const {
  auto entered = entered_.find(id);
  if (entered != entered_.end() && entered->second >= epoch) return false;
  return !pending_.count(id) && !waiting_.count(id) && !running_.count(id) && !finished_.count(id);
}

void Controller::apply_committed() {
  std::vector<CommittedSubmissions> submitted;
  std::vector<CommittedEnds> ended;
  {
    std::lock_guard lock(committed_mutex_);
    if (submitted_inbox_.empty() && ended_inbox_.empty()) return;
    submitted.swap(submitted_inbox_);
    ended.swap(ended_inbox_);
  }
  pass_wanted_ = true;
  for (const CommittedEnds& batch : ended) {
    for (const JobEnd& end : batch.ends) {
      // An end is final (end_by_rule never requeues), so applying one that a sync() replayed
      // meanwhile changes nothing; only a later attempt running now is not this end's.
      auto live = running_.find(end.job);
      if (live != running_.end() && live->second.attempt != end.attempt) continue;
      if (Status ok = apply_end(end.job, end.state, batch.now); !ok)
        log_line("job " + std::to_string(end.job) +
                 " ended, but the memory did not follow: " + ok.error().message);
    }
  }
  for (CommittedSubmissions& batch : submitted) {
    for (size_t i = 0; i < batch.ids.size(); ++i) {
      JobId id = batch.ids[i];
      if (!apply_wanted(id, batch.epoch)) continue;
      if (rebuilt_at_epoch_ >= batch.epoch) {
        // The rebuild may have read the job and a pass started it since, or not: the store says.
        Result<StoredJob> stored = store_.job(id);
        if (!stored || stored->state != JobState::kPending || !stored->hold.empty() ||
            !places(*stored))
          continue;  // an unreadable one is read by the next rebuild
      }
      if (Result<JobId> applied = apply_submitted(std::move(batch.jobs[i]), id, batch.at[i]);
          !applied)
        log_line("job " + std::to_string(id) + ": " + applied.error().message);
    }
  }
  std::lock_guard lock(committed_mutex_);
  for (const CommittedSubmissions& batch : submitted) outstanding_epochs_.erase(batch.epoch);
  if (outstanding_epochs_.empty()) {
    entered_.clear();
    rebuilt_at_epoch_ = -1;
  } else {
    // A batch's jobs enter memory after it began: what entered before the oldest one still
    // outstanding began is no batch's concern.
    int64_t oldest = *outstanding_epochs_.begin();
    std::erase_if(entered_, [&](const auto& e) { return e.second < oldest; });
  }
}

Result<v1::ListJobsReply> Controller::list_jobs(const v1::ListJobsRequest& request, Seconds now) {
  JobQuery query;
  for (int64_t id : request.job_ids()) query.ids.push_back(id);
  query.exact_ids = request.exact_ids();
  for (int state : request.states()) {
    Result<JobState> s = from_proto(static_cast<v1::JobState>(state));
    if (!s) return s.error();
    query.states.push_back(*s);
  }
  if (request.has_uid()) query.uid = request.uid();
  if (request.window_end() > 0) query.submitted_by = request.window_end();
  if (request.window_start() > 0) query.not_ended_before = request.window_start();
  query.names.assign(request.names().begin(), request.names().end());
  query.partitions.assign(request.partitions().begin(), request.partitions().end());
  // As squeue: without states or ids, the jobs still in the system.
  query.only_active = query.states.empty() && query.ids.empty() && !request.all_states();
  Result<std::vector<StoredJob>> jobs = store_.list_jobs(query);
  if (!jobs) return jobs.error();
  // Accounting: the jobs' usage and steps, in two reads for all of them (and one per job that
  // ran steps of its own).
  std::map<JobId, std::vector<StepUsage>> usage;
  std::set<JobId> with_steps;
  if (request.accounting() && !jobs->empty()) {
    std::vector<JobId> ids;
    for (const StoredJob& job : *jobs) ids.push_back(job.id);
    Result<std::map<JobId, std::vector<StepUsage>>> used = store_.step_usage(ids);
    if (!used) return used.error();
    usage = std::move(*used);
    Result<std::set<JobId>> stepped = store_.jobs_with_steps(ids);
    if (!stepped) return stepped.error();
    with_steps = std::move(*stepped);
  }
  v1::ListJobsReply reply;
  auto lock = lock_memory();
  for (const StoredJob& job : *jobs) {
    v1::JobInfo* info = reply.add_jobs();
    *info = job_info(job, machine_.node_count());
    info->set_partition(-1);
    // An administrator's suspension is stored (S), so every controller shows it.
    info->set_admin_suspended(job.state == JobState::kSuspended);
    if (gang_)
      if (auto at = gang_->partition_of(job.id)) info->set_partition(at->first);
    if (auto used = usage.find(job.id); used != usage.end())
      for (const StepUsage& step : used->second)
        if (step.attempt == job.attempt) *info->add_usage() = step_usage_info(step);
    // Its priority, from the scheduler's order (the figures of its last pass).
    if (priority_ && priority_has_users_ && scheduler_ && !is_final(job.state) &&
        !job.account.empty()) {
      const Job core = core_job(job);
      const Seconds at = job.state == JobState::kPending ? now : job.start_time;
      const PriorityOrder::Factors f = priority_->factors(core, at);
      info->set_has_priority(true);
      info->set_priority(priority_->priority(core, at));
      info->set_age_factor(f.age);
      info->set_fairshare_factor(f.fair_share);
      info->set_jobsize_factor(f.job_size);
      info->set_qos_factor(f.qos);
    }
    // A job asked for by its id (show job) comes with its steps, as every job for accounting.
    if ((request.accounting() && with_steps.contains(job.id)) ||
        (!request.accounting() && !request.job_ids().empty() &&
         request.job_ids_size() <= kMaxJobsShownWithSteps)) {
      v1::ListStepsRequest steps;
      steps.set_job_id(job.id);
      if (Result<v1::ListStepsReply> listed = list_steps(steps); listed)
        for (v1::StepInfo& s : *listed->mutable_steps()) *info->add_steps() = std::move(s);
    }
    auto live = running_.find(job.id);
    if (live == running_.end() || live->second.attempt != job.attempt) continue;
    info->set_seconds_frozen(frozen_seconds(job.id, now));
    info->set_idle(live->second.idle);
    // The store keeps R for a time-shared job; whether it is frozen now is the controller's.
    if (job.state == JobState::kRunning && live->second.frozen) info->set_state(v1::SUSPENDED);
  }
  return reply;
}

}  // namespace trellis
