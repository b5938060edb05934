#include "sched/batch_core.h"

#include <algorithm>
#include <limits>

namespace trellis {

namespace {

// Rounds of the policy in one pass while starts on shared nodes keep coming: a policy starts at
// most one job per node per call (alloc/node_sharing.h), so a node of 64 free cores takes up to
// 64 jobs of one core in one pass.
constexpr int kMostSharedRounds = 256;

std::unique_ptr<NodePool> pool_for(const Machine& machine, const BatchOptions& options) {
  if (options.node_types.empty()) return nullptr;
  return std::make_unique<NodePool>(options.node_types, options.type_of, machine.node_count());
}

}  // namespace

BatchCore::BatchCore(const Machine& machine, const Allocator& allocator, const QueuePolicy& policy,
                     BatchOptions options)
    : machine_(machine),
      pool_(pool_for(machine, options)),
      sharing_(pool_ ? std::make_unique<NodeSharingAllocator>(machine, allocator, *pool_)
                     : nullptr),
      allocator_(sharing_ ? static_cast<const Allocator&>(*sharing_) : allocator),
      policy_(policy),
      options_(std::move(options)),
      free_(NodeSet::all(machine.node_count())),
      down_(machine.node_count()) {}

Status BatchCore::take_grants(const Job& job, RunningJob& running) {
  if (!pool_) return Ok{};
  if (running.grants.empty())  // whole nodes (a job placed without the pool: a snapshot's)
    running.nodes.for_each([&](NodeId node) { running.grants.push_back(pool_->whole(node)); });
  const bool same_user = job.request.demand && job.request.demand->same_user_only;
  for (size_t i = 0; i < running.grants.size(); ++i) {
    if (Status ok = pool_->take(running.grants[i], job.user, same_user); !ok) {
      for (size_t j = 0; j < i; ++j) pool_->give_back(running.grants[j], job.user, same_user);
      return fail("job " + std::to_string(job.id) + ": " + ok.error().message);
    }
  }
  return Ok{};
}

void BatchCore::give_back_grants(const Job& job, const RunningJob& running) {
  if (!pool_) return;
  const bool same_user = job.request.demand && job.request.demand->same_user_only;
  for (const NodeGrant& grant : running.grants) pool_->give_back(grant, job.user, same_user);
}

void BatchCore::refresh_free() {
  if (!pool_) return;
  free_ = pool_->open_nodes() - down_;
}

Status BatchCore::submit(const Job& job, Seconds /*now*/) {
  const int n = machine_.node_count();
  if (job.request.nodes > n)
    return fail("needs " + std::to_string(job.request.nodes) + " nodes, the machine has " +
                std::to_string(n));
  if (auto ok = allocator_.check(job.request); !ok) return ok.error();
  if (jobs_.count(job.id))
    return fail("job " + std::to_string(job.id) + " is already in the system");
  queue_.push_back(&store(job).job);
  return Ok{};
}

BatchCore::Stored& BatchCore::store(const Job& job) {
  Stored* slot;
  if (free_slots_.empty()) {
    slot = &job_store_.emplace_back(Stored{job});
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slot->job = job;
    slot->running_at = Stored::kWaiting;
  }
  jobs_.emplace(job.id, slot);
  return *slot;
}

void BatchCore::forget(Stored& stored) {
  jobs_.erase(stored.job.id);
  free_slots_.push_back(&stored);
}

BatchCore::Stored* BatchCore::running(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() || it->second->running_at == Stored::kWaiting ? nullptr : it->second;
}

void BatchCore::remove_running(Stored& stored) {
  const size_t at = stored.running_at;
  // Swap-remove: the order of running_ is the order policies see, and it is part of the schedule
  // (kept as the simulator always had it, so schedules stay identical).
  if (at + 1 != running_.size()) {
    running_[at] = std::move(running_.back());
    jobs_.at(running_[at].id)->running_at = at;
  }
  running_.pop_back();
  forget(stored);
}

Status BatchCore::ended(JobId job, Seconds now) {
  Stored* stored = running(job);
  if (!stored) return fail("job " + std::to_string(job) + " is not running");
  if (options_.order) options_.order->ended(stored->job, running_[stored->running_at].start, now);
  if (options_.limits) options_.limits->ended(stored->job);
  free_ |= running_[stored->running_at].nodes;
  if (!down_.empty()) free_ -= down_;  // a node that went down while held stays out
  give_back_grants(stored->job, running_[stored->running_at]);
  refresh_free();
  remove_running(*stored);
  return Ok{};
}

Status BatchCore::cancel(JobId job, Seconds now) {
  if (running(job)) return ended(job, now);
  auto at = std::find_if(queue_.begin(), queue_.end(), [&](const Job* j) { return j->id == job; });
  if (at == queue_.end()) return fail("job " + std::to_string(job) + " is not in the system");
  queue_.erase(at);
  std::erase_if(reservations_, [&](const Reservation& r) { return r.job == job; });
  forget(*jobs_.at(job));
  return Ok{};
}

Status BatchCore::add_running(const Job& job, const RunningJob& r) {
  const int n = machine_.node_count();
  if (jobs_.count(job.id))
    return fail("job " + std::to_string(job.id) + " is already in the system");
  if (r.nodes.size() != n || r.id != job.id)
    return fail("job " + std::to_string(job.id) + "'s nodes are not of this machine");
  RunningJob placed = r;
  placed.node_count = r.nodes.count();
  if (pool_) {
    // The pool refuses what it has given out already: nodes are shared, cores and GPUs never.
    if (Status ok = take_grants(job, placed); !ok) return ok;
  } else {
    for (const RunningJob& other : running_)
      if (!(other.nodes & r.nodes).empty())
        return fail("job " + std::to_string(job.id) + " would share nodes with running job " +
                    std::to_string(other.id));
  }
  Stored& stored = store(job);
  stored.running_at = running_.size();
  if (options_.order) options_.order->started(job, r.start);
  if (options_.limits) options_.limits->started(job, placed.node_count);
  running_.push_back(std::move(placed));
  free_ -= r.nodes;
  refresh_free();
  return Ok{};
}

Status BatchCore::unstart(JobId job) {
  Stored* stored = running(job);
  if (!stored) return fail("job " + std::to_string(job) + " is not running");
  if (options_.order) {
    const Seconds start = running_[stored->running_at].start;
    options_.order->ended(stored->job, start, start);  // taken back: it used nothing
  }
  if (options_.limits) options_.limits->ended(stored->job);
  free_ |= running_[stored->running_at].nodes;
  if (!down_.empty()) free_ -= down_;
  give_back_grants(stored->job, running_[stored->running_at]);
  refresh_free();
  // remove_running() frees the slot: the job is stored again, waiting.
  Job copy = stored->job;
  remove_running(*stored);
  const Job* waiting = &store(copy).job;
  auto later = std::find_if(queue_.begin(), queue_.end(), [&](const Job* queued) {
    return queued->submit > copy.submit || (queued->submit == copy.submit && queued->id > copy.id);
  });
  queue_.insert(later, waiting);
  return Ok{};
}

Status BatchCore::on_machine(NodeId node) const {
  if (node < 0 || node >= machine_.node_count())
    return fail("node " + std::to_string(node) + " is not on the machine");
  return Ok{};
}

Status BatchCore::node_down(NodeId node, Seconds /*now*/) {
  if (auto ok = on_machine(node); !ok) return ok;
  down_.set(node);
  free_.reset(node);
  refresh_free();
  return Ok{};
}

Status BatchCore::node_up(NodeId node, Seconds /*now*/) {
  if (auto ok = on_machine(node); !ok) return ok;
  down_.reset(node);
  bool held = std::any_of(running_.begin(), running_.end(),
                          [&](const RunningJob& r) { return r.nodes.test(node); });
  if (!held) free_.set(node);
  refresh_free();
  return Ok{};
}

Status BatchCore::busy(JobId job, Seconds /*now*/) {
  if (!running(job)) return fail("job " + std::to_string(job) + " is not running");
  return Ok{};
}

const PassResult& BatchCore::pass(Seconds now) {
  last_pass_ = now;
  result_.now = now;
  result_.decisions.clear();
  if (options_.order) options_.order->order(queue_, now, options_.max_job_test);
  // While jobs start on shared nodes, the policy is called again: each call starts at most one
  // job per node (see kMostSharedRounds).
  for (int round = 0; round < kMostSharedRounds; ++round)
    if (schedule_once(now) == 0 || queue_.empty()) break;
  return result_;
}

int BatchCore::schedule_once(Seconds now) {
  // Only the head of the queue is shown to the policy (BatchOptions::max_job_test); every job it
  // starts is in that head, so the rest of the queue is touched only to close the gaps.
  const size_t tested = jobs_tested();
  if (sharing_) sharing_->begin_round(free_);
  const size_t shown = show_head(tested);
  Schedule decided =
      policy_.schedule({now,
                        options_.limits ? std::span<const Job* const>(visible_.data(), shown)
                                        : std::span<const Job* const>(queue_.data(), tested),
                        running_, free_, reservations_},
                       allocator_);
  int shared = 0;
  if (!decided.starts.empty()) {
    started_.assign(tested, false);
    for (StartDecision& d : decided.starts) {
      if (options_.limits) d.queue_index = visible_at_[d.queue_index];
      const Job& job = *queue_[d.queue_index];
      // Two starts of one pass may together pass a limit that each alone keeps: the later waits.
      if (options_.limits && !options_.limits->held_back(job).empty()) continue;
      RunningJob running{job.id,
                         now,
                         now + job.time_limit,
                         d.placement.nodes,
                         job.request.nodes,
                         std::move(d.placement.grants)};
      if (Status taken = take_grants(job, running); !taken) continue;  // stays queued
      started_[d.queue_index] = true;
      free_ -= d.placement.nodes;
      if (job.request.demand && !job.request.demand->whole) ++shared;
      jobs_.at(job.id)->running_at = running_.size();
      if (options_.order) options_.order->started(job, now);
      if (options_.limits) options_.limits->started(job, running.nodes.count());
      result_.decisions.push_back({CoreDecision::Kind::kStart, job.id, std::move(d.placement.nodes),
                                   d.placement.box, running.grants});
      running_.push_back(std::move(running));
    }
    size_t kept = 0;
    for (size_t i = 0; i < tested; ++i)
      if (!started_[i]) queue_[kept++] = queue_[i];
    queue_.erase(queue_.begin() + static_cast<long>(kept),
                 queue_.begin() + static_cast<long>(tested));
    refresh_free();
  }
  reservations_ = std::move(decided.reservations);
  return shared;
}

size_t BatchCore::show_head(size_t tested) {
  if (!options_.limits) return tested;
  visible_.clear();
  visible_at_.clear();
  for (size_t i = 0; i < tested; ++i) {
    if (!options_.limits->held_back(*queue_[i]).empty()) continue;
    visible_.push_back(queue_[i]);
    visible_at_.push_back(i);
  }
  return visible_.size();
}

std::optional<Seconds> BatchCore::next_wakeup() const {
  if (queue_.empty()) return std::nullopt;
  std::optional<Seconds> wake;
  for (const Reservation& r : reservations_)
    if (r.start > last_pass_ && (!wake || r.start < *wake)) wake = r.start;
  return wake;
}

const Job* BatchCore::find(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second->job;
}

CoreSnapshot BatchCore::snapshot() const {
  CoreSnapshot s;
  for (const Job* j : queue_) s.queue.push_back(*j);
  s.running = running_;
  for (const RunningJob& r : running_) s.running_jobs.push_back(jobs_.at(r.id)->job);
  s.reservations = reservations_;
  s.down = down_;
  s.last_pass = last_pass_;
  return s;
}

Status BatchCore::restore(const CoreSnapshot& s) {
  const int n = machine_.node_count();
  if (s.down.size() != n || s.running.size() != s.running_jobs.size())
    return fail("the snapshot is not of this machine's core");
  NodeSet held(n);
  for (const RunningJob& r : s.running) {
    if (r.nodes.size() != n || (!pool_ && !(held & r.nodes).empty()))
      return fail("the snapshot gives a node to two running jobs (job " + std::to_string(r.id) +
                  ")");
    held |= r.nodes;
  }
  job_store_.clear();
  free_slots_.clear();
  jobs_.clear();
  queue_.clear();
  for (const Job& j : s.running_jobs)
    if (!jobs_.count(j.id)) store(j);
  for (const Job& j : s.queue) {
    if (jobs_.count(j.id))
      return fail("job " + std::to_string(j.id) + " appears twice in the snapshot");
    queue_.push_back(&store(j).job);
  }
  running_ = s.running;
  for (size_t i = 0; i < running_.size(); ++i) {
    auto it = jobs_.find(running_[i].id);
    if (it == jobs_.end())
      return fail("running job " + std::to_string(running_[i].id) + " has no job in the snapshot");
    it->second->running_at = i;
  }
  down_ = s.down;
  free_ = NodeSet::all(n) - held - down_;
  if (pool_) {
    pool_->clear();
    for (RunningJob& r : running_)
      if (Status ok = take_grants(jobs_.at(r.id)->job, r); !ok)
        return fail("the snapshot gives twice what a node has: " + ok.error().message);
    refresh_free();
  }
  reservations_ = s.reservations;
  last_pass_ = s.last_pass;
  if (options_.limits) {
    options_.limits->clear();
    for (const RunningJob& r : running_)
      options_.limits->started(jobs_.at(r.id)->job, r.nodes.count());
  }
  return Ok{};
}

}  // namespace trellis
