#include <algorithm>
#include <set>

#include "core/dependency.h"
#include "core/hostlist.h"
#include "daemon/controller.h"
#include "daemon/log.h"

// Jobs that wait outside the scheduling core: a dependency not satisfied yet (or never to be), or
// an array task whose array has as many tasks in the core as its limit allows. The core and its
// policy never see them, which is how every policy (batch or gang) honours dependencies and array
// limits the same way; a pass lets them into the queue once they may run. What keeps a job waiting
// is in the store (its dependency text, its array's tasks), so a restarted controller, or another
// one taking the scheduler lease over, keeps the same jobs waiting.

namespace trellis {
namespace {

// Slurm's pending reasons for waiting jobs.
constexpr std::string_view kDependency = "Dependency";
constexpr std::string_view kNeverSatisfied = "DependencyNeverSatisfied";
constexpr std::string_view kArrayLimit = "JobArrayTaskLimit";

DependencyJob dependency_job(const StoredJob& job) {
  DependencyJob out;
  out.ended = is_final(job.state);
  out.started = job.start_time > 0 || job.attempt > 0 || job.state != JobState::kPending;
  out.succeeded = job.state == JobState::kCompleted;
  return out;
}

}  // namespace

bool Controller::array_has_room(JobId array_job, int limit) const {
  if (array_job == 0 || limit <= 0) return true;
  int in_core = 0;
  for (const auto& [id, job] : pending_) in_core += job.array_job == array_job ? 1 : 0;
  for (const auto& [id, live] : running_) in_core += live.array_job == array_job ? 1 : 0;
  return in_core < limit;
}

Status Controller::enqueue(const StoredJob& job, Seconds now) {
  pass_wanted_ = true;
  if (int64_t epoch = outstanding_epoch(); epoch >= 0) entered_[job.id] = epoch;
  // A dependency is looked at by the next pass (admit_waiting()), with the store's states.
  if (!job.dependency.empty() || !array_has_room(job.array_job, job.array_limit)) {
    waiting_[job.id] = job;
    return Ok{};
  }
  gang_log_dirty_ = true;
  if (Status queued = core_->submit(core_job(job), now); !queued) return queued;
  pending_[job.id] = job;
  queued_since_pass_.push_back(job.id);
  return Ok{};
}

Status Controller::admit_waiting(Seconds now) {
  waiting_reason_.clear();
  if (waiting_.empty()) return Ok{};
  // The jobs every dependency names, read in one query (an array's id brings its tasks), and the
  // active jobs of the users that have singleton dependencies.
  std::map<JobId, Dependency> dependencies;
  JobQuery named;
  std::set<int> singleton_users;
  for (const auto& [id, job] : waiting_) {
    if (job.dependency.empty()) continue;
    Result<Dependency> parsed = parse_dependency(job.dependency);
    if (!parsed) {  // checked at submission; a store edited by hand
      log_line("job " + std::to_string(id) + ": its dependency '" + job.dependency +
               "' does not parse (" + parsed.error().message + "); it waits");
      waiting_reason_[id] = std::string(kNeverSatisfied);
      continue;
    }
    for (const DependencyTerm& term : parsed->terms) {
      if (term.kind == DependencyKind::kSingleton) singleton_users.insert(job.uid);
      for (const DependencyTarget& target : term.targets) named.ids.push_back(target.job);
    }
    dependencies[id] = std::move(*parsed);
  }
  std::map<JobId, StoredJob> by_id;
  std::map<JobId, std::vector<const StoredJob*>> by_array;
  if (!named.ids.empty()) {
    Result<std::vector<StoredJob>> jobs = store_.list_jobs(named);
    if (!jobs) return jobs.error();
    for (StoredJob& job : *jobs) by_id[job.id] = std::move(job);
    for (const auto& [id, job] : by_id)
      if (job.array_job != 0) by_array[job.array_job].push_back(&job);
  }
  // (uid, name) -> the lowest id of an active job with them.
  std::map<std::pair<int, std::string>, JobId> first_active;
  for (int uid : singleton_users) {
    JobQuery active;
    active.uid = uid;
    active.only_active = true;
    Result<std::vector<StoredJob>> jobs = store_.list_jobs(active);
    if (!jobs) return jobs.error();
    for (const StoredJob& job : *jobs) {
      auto [at, added] = first_active.try_emplace({uid, job.name}, job.id);
      if (!added) at->second = std::min(at->second, job.id);
    }
  }

  std::vector<JobId> satisfied, never;
  for (const auto& [id, dependency] : dependencies) {
    const StoredJob& job = waiting_.at(id);
    auto jobs_of = [&](const DependencyTarget& target) {
      std::vector<DependencyJob> out;
      auto array = by_array.find(target.job);
      if (array != by_array.end()) {
        for (const StoredJob* task : array->second)
          if (target.task < 0 || task->array_task == target.task)
            out.push_back(dependency_job(*task));
      } else if (auto one = by_id.find(target.job); one != by_id.end() && target.task < 0) {
        out.push_back(dependency_job(one->second));
      }
      return out;
    };
    // (A copy of the binding: clang 14 cannot capture a structured binding, GCC can.)
    auto singleton_clear = [&, this_id = id] {
      auto first = first_active.find({job.uid, job.name});
      return first == first_active.end() || first->second >= this_id;
    };
    switch (evaluate_dependency(dependency, jobs_of, singleton_clear)) {
      case DependencyState::kSatisfied:
        satisfied.push_back(id);
        break;
      case DependencyState::kWaiting:
        waiting_reason_[id] = std::string(kDependency);
        break;
      case DependencyState::kNeverSatisfied:
        if (job.kill_on_invalid_dep) {
          never.push_back(id);
        } else {
          waiting_reason_[id] = std::string(kNeverSatisfied);
        }
        break;
    }
  }
  if (!satisfied.empty()) {
    if (Status ok = store_.clear_dependencies(satisfied); !ok) return ok;
    for (JobId id : satisfied) waiting_.at(id).dependency.clear();
  }
  for (JobId id : never) {
    // --kill-on-invalid-dep: the job is cancelled, and says why.
    Result<JobState> after = store_.stop_job(id, 0, StopCause::kCancel, kNeverSatisfied, now);
    if (!after) return after.error();
    log_line("job " + std::to_string(id) + " cancelled: its dependency '" +
             waiting_.at(id).dependency + "' can never be satisfied (--kill-on-invalid-dep)");
    waiting_.erase(id);
    notes_.erase(id);
    finished_.insert(id);
  }
  // In submission order, as long as each array has room.
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const StoredJob& job = it->second;
    if (!job.dependency.empty()) {
      ++it;
      continue;
    }
    if (!array_has_room(job.array_job, job.array_limit)) {
      waiting_reason_[job.id] = std::string(kArrayLimit);
      ++it;
      continue;
    }
    gang_log_dirty_ = true;
    if (Status queued = core_->submit(core_job(job), now); !queued) {
      log_line("job " + std::to_string(job.id) + " failed: " + queued.error().message);
      (void)store_.set_job_state(job.id, JobState::kFailed, queued.error().message, now);
      finished_.insert(job.id);
    } else {
      pending_[job.id] = job;
      queued_since_pass_.push_back(job.id);
    }
    it = waiting_.erase(it);
  }
  return Ok{};
}

Status Controller::check_dependency_targets(const std::string& dependency) {
  Result<Dependency> parsed = parse_dependency(dependency);
  if (!parsed) return parsed.error();
  JobQuery named;
  for (const DependencyTerm& term : parsed->terms)
    for (const DependencyTarget& target : term.targets) named.ids.push_back(target.job);
  if (named.ids.empty()) return Ok{};
  Result<std::vector<StoredJob>> jobs = store_.list_jobs(named);
  if (!jobs) return jobs.error();
  for (const DependencyTerm& term : parsed->terms) {
    for (const DependencyTarget& target : term.targets) {
      bool found = std::any_of(jobs->begin(), jobs->end(), [&](const StoredJob& job) {
        if (target.task >= 0) return job.array_job == target.job && job.array_task == target.task;
        return job.id == target.job || job.array_job == target.job;
      });
      if (!found) {
        std::string name = std::to_string(target.job);
        if (target.task >= 0) {
          name += '_';  // appended: GCC 12's -Wrestrict misreads "_" + to_string
          name += std::to_string(target.task);
        }
        return fail("dependency: job " + name + " does not exist (Slurm: Job dependency problem)");
      }
    }
  }
  return Ok{};
}

Result<std::string> Controller::partition_of(const std::string& asked, bool limit_given,
                                             StoredJob& job) const {
  const PartitionConfig* chosen = nullptr;
  std::string names;
  for (const PartitionConfig& p : partitions_) {
    names += (names.empty() ? "" : ", ") + p.name;
    if (asked.empty() ? p.is_default : p.name == asked) chosen = &p;
  }
  if (!chosen)
    return fail("partition: '" + asked + "' is not one of this cluster's (" + names + ")");
  if (!limit_given && chosen->default_time > 0) job.time_limit = chosen->default_time;
  if (chosen->max_time > 0 && job.time_limit > chosen->max_time) {
    if (!limit_given) {
      job.time_limit = chosen->max_time;  // no limit asked: the partition's most
    } else {
      return fail("time_limit: " + std::to_string(static_cast<long>(job.time_limit / 60)) +
                  " minutes is over partition " + chosen->name + "'s MaxTime of " +
                  std::to_string(static_cast<long>(chosen->max_time / 60)) + " minutes");
    }
  }
  job.partition = chosen->name;
  return chosen->name;
}

}  // namespace trellis
