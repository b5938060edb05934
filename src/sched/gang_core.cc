#include "sched/gang_core.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace trellis {

namespace {

std::string job_text(JobId job) {
  return "job " + std::to_string(job);
}

// Do the processor ranges [a_first, a_first + a_size) and [b_first, b_first + b_size) meet.
bool overlap(int a_first, int a_size, int b_first, int b_size) {
  return a_first < b_first + b_size && b_first < a_first + a_size;
}

}  // namespace

GangCore::GangCore(gang::GangScheduler& policy, Curve order, GangCoreOptions options)
    : policy_(policy),
      repeats_slots_(policy.slots_change_only_on_calls()),
      order_(std::move(order)),
      options_(options) {
  if (order_.size() != policy_.processors())
    throw std::invalid_argument("GangCore: the node order has " + std::to_string(order_.size()) +
                                " ranks, the policy " + std::to_string(policy_.processors()) +
                                " processors");
  if (!(options_.slice > 0) || !(options_.empty_slot > 0))
    throw std::invalid_argument("GangCore: slot lengths must be positive");
  if (options_.exclusive_jobs && !options_.report_switches)
    throw std::invalid_argument("GangCore: exclusive jobs need report_switches");
  identity_order_ = true;
  for (int p = 0; p < order_.size() && identity_order_; ++p)
    identity_order_ = order_.node_at(p) == p;
}

Status GangCore::call_submit(JobId job, int size) {
  own_slot();
  if (auto ok = policy_.submit(job, size); !ok) return ok;
  calls_.push_back({PolicyCall::Kind::kSubmit, job, size});
  return Ok{};
}

void GangCore::call_finish(JobId job) {
  own_slot();
  calls_.push_back({PolicyCall::Kind::kFinish, job, 0});
  policy_.finish(job);
}

bool GangCore::call_suspend(JobId job) {
  own_slot();
  calls_.push_back({PolicyCall::Kind::kSuspend, job, 0});
  return policy_.suspend(job);
}

void GangCore::call_resume(JobId job) {
  own_slot();
  calls_.push_back({PolicyCall::Kind::kResume, job, 0});
  policy_.resume(job);
}

void GangCore::mark_run(JobId job, bool ran) {
  if (job < 0) return;
  const auto at = static_cast<size_t>(job);
  if (at >= has_run_.size()) {
    if (!ran || at >= 2 * has_run_.size() + (1 << 16)) return;  // a sparse id: no byte, no harm
    has_run_.resize(std::max(at + 1, 2 * has_run_.size()), 0);
  }
  has_run_[at] = ran ? 1 : 0;
}

NodeSet GangCore::partition_nodes(int first, int size) const {
  NodeSet nodes(order_.size());
  if (identity_order_) {
    nodes.set_range(first, first + size);  // word by word: the same nodes, for big partitions
  } else {
    for (int p = first; p < first + size; ++p) nodes.set(order_.node_at(p));
  }
  return nodes;
}

const Job* GangCore::find(JobId id) const {
  auto it = details_.find(id);
  return it == details_.end() ? nullptr : &it->second.job;
}

Status GangCore::submit(const Job& job, Seconds /*now*/) {
  const int n = order_.size();
  if (job.request.nodes < 1 || job.request.nodes > n)
    return fail(Error::Code::kNeverFits, "needs " + std::to_string(job.request.nodes) +
                                             " nodes, the machine has " + std::to_string(n));
  if (jobs_.find(job.id)) return fail(job_text(job.id) + " is already in the system");
  if (auto ok = call_submit(job.id, job.request.nodes); !ok) return ok;
  jobs_.emplace(job.id, SlotState{});
  ++not_run_;
  details_.emplace(job.id, Details{job});
  if (is_exclusive(job.id)) ++exclusive_in_system_;
  return Ok{};
}

Status GangCore::ended(JobId job, Seconds /*now*/) {
  const SlotState* found = jobs_.find(job);
  if (!found || found->first < 0)
    return fail(Error::Code::kNotFound, job_text(job) + " is not running");
  call_finish(job);
  forget_exclusive(job);
  jobs_.erase(job);
  details_.erase(job);
  mark_run(job, false);
  return Ok{};
}

Status GangCore::cancel(JobId job, Seconds now) {
  SlotState* found = jobs_.find(job);
  if (!found || found->withdrawn)
    return fail(Error::Code::kNotFound, job_text(job) + " is not in the system");
  if (found->first >= 0) return ended(job, now);
  // Waiting in line for its nodes, it keeps no other job off them any more.
  std::erase_if(exclusive_, [&](const Exclusive& e) { return e.job == job; });
  found->withdrawn = true;
  ++withdrawn_waiting_;
  return Ok{};
}

Status GangCore::node_down(NodeId node, Seconds /*now*/) {
  return fail(Error::Code::kUnavailable,
              "gang policy " + policy_.name() + " keeps one partition tree over all " +
                  std::to_string(order_.size()) + " nodes and cannot take node " +
                  std::to_string(node) + " out of it; use a queue policy to run with nodes down");
}

Status GangCore::node_up(NodeId node, Seconds /*now*/) {
  if (node < 0 || node >= order_.size())
    return fail(Error::Code::kNotFound, "node " + std::to_string(node) + " is not on the machine");
  return Ok{};  // no node is ever down
}

bool GangCore::idle(JobId job, Seconds /*now*/) {
  SlotState* found = jobs_.find(job);
  if (!found || found->idle || found->first < 0) return false;
  if (is_exclusive(job)) return false;  // it keeps its nodes, as on a queue policy
  if (options_.report_switches && found->last_slot != slots_) return false;
  if (!call_suspend(job)) return false;
  found->idle = true;
  return true;
}

Status GangCore::busy(JobId job, Seconds /*now*/) {
  SlotState* found = jobs_.find(job);
  if (!found) return fail(Error::Code::kNotFound, job_text(job) + " is not running");
  if (!found->idle) return Ok{};
  call_resume(job);
  found->idle = false;
  return Ok{};
}

const PassResult& GangCore::pass(Seconds now) {
  result_.now = now;
  result_.decisions.clear();
  last_pass_ = now;
  // The last slot: switch_reported() compares it with the next; without reports it is done with.
  if (options_.report_switches) own_slot();
  if (jobs_.empty()) {
    slot_.clear();
    slot_view_ = &slot_;
    slot_end_ = now;
    return result_;
  }
  const std::vector<gang::SlotJob>* next = &call_next_slot();
  if (withdrawn_waiting_ > 0) next = &drop_withdrawn(next);
  if (exclusive_in_system_ > 0) next = &keep_exclusive(*next);
  ++slots_;
  if (options_.report_switches) {
    switch_reported(*next, now);
  } else if (not_run_ > 0) {
    // Without switches to report only first starts matter (and only while some job has not
    // run): the byte says a job is past its own.
    for (const gang::SlotJob& r : *next)
      if (!has_run(r.job)) first_start(r, jobs_.at(r.job), now, result_.decisions);
  }
  slot_view_ = next;
  slot_end_ = now + (next->empty() ? options_.empty_slot : options_.slice);
  return result_;
}

void GangCore::repeat_slot(long extra) {
  if (extra <= 0) return;
  if (!repeats_slots() || calls_.empty() || calls_.back().kind != PolicyCall::Kind::kNextSlot ||
      slot_view_->empty())
    throw std::logic_error(
        "GangCore::repeat_slot: not right after a pass of a policy that repeats "
        "its slots");
  calls_.back().job += extra;  // the log's run of next_slot() calls, replayed by restore()
  slots_ += extra;
  for (const gang::SlotJob& r : *slot_view_)
    if (SlotState* j = jobs_.find(r.job)) j->last_slot = slots_;
  slot_end_ += static_cast<Seconds>(extra) * options_.slice;
}

const std::vector<gang::SlotJob>& GangCore::drop_withdrawn(const std::vector<gang::SlotJob>* next) {
  // A withdrawn job leaves the policy when it is first picked; the slot is decided again.
  // Finishing it must not copy the policy's new slot as the last one (which, with reports,
  // own_slot() has kept in slot_ already; without, is done with).
  slot_view_ = &slot_;
  while (withdrawn_waiting_ > 0) {
    std::vector<JobId> withdrawn;
    for (const gang::SlotJob& r : *next)
      if (jobs_.at(r.job).withdrawn) withdrawn.push_back(r.job);
    if (withdrawn.empty()) break;
    for (JobId id : withdrawn) {
      call_finish(id);
      forget_exclusive(id);
      jobs_.erase(id);
      details_.erase(id);
      --withdrawn_waiting_;
      --not_run_;
    }
    next = &call_next_slot();
  }
  return *next;
}

GangCore::Wait GangCore::why_waiting(JobId id) const {
  const SlotState* j = jobs_.find(id);
  return j != nullptr && j->first < 0 && j->kept_off ? Wait::kForExclusiveNodes : Wait::kForASlot;
}

bool GangCore::is_exclusive(JobId job) const {
  if (!options_.exclusive_jobs) return false;
  auto it = details_.find(job);
  return it != details_.end() && !it->second.job.share;
}

void GangCore::forget_exclusive(JobId job) {
  if (!is_exclusive(job)) return;
  std::erase_if(exclusive_, [&](const Exclusive& e) { return e.job == job; });
  --exclusive_in_system_;
}

const std::vector<gang::SlotJob>& GangCore::keep_exclusive(
    const std::vector<gang::SlotJob>& placed) {
  // Exclusive jobs placed for the first time join the line.
  for (const gang::SlotJob& r : placed) {
    if (!is_exclusive(r.job) || jobs_.at(r.job).first >= 0) continue;
    if (std::none_of(exclusive_.begin(), exclusive_.end(),
                     [&](const Exclusive& e) { return e.job == r.job; }))
      exclusive_.push_back({r.job, r.first, r.size, false});
  }
  // A waiting one starts once no started job overlaps it, nor one waiting before it in line.
  for (size_t i = 0; i < exclusive_.size(); ++i) {
    Exclusive& e = exclusive_[i];
    if (e.started) continue;
    bool clear = true;
    for (size_t k = 0; k < exclusive_.size() && clear; ++k) {
      const Exclusive& other = exclusive_[k];
      if (k != i && (k < i || other.started) && overlap(e.first, e.size, other.first, other.size))
        clear = false;
    }
    if (clear) {
      clear = jobs_.all_of([&](JobId id, const SlotState& j) {
        return j.first < 0 || id == e.job || !overlap(e.first, e.size, j.first, j.size);
      });
    }
    e.started = clear;  // its kStart comes with this slot (switch_reported)
    jobs_.at(e.job).kept_off = !clear;
  }
  // The slot: every started exclusive job, and the policy's others but those kept off their
  // nodes (a job that has not started is kept off those of a waiting one too).
  kept_.clear();
  for (const Exclusive& e : exclusive_)
    if (e.started) kept_.push_back({e.job, e.first, e.size});
  for (const gang::SlotJob& r : placed) {
    SlotState& j = jobs_.at(r.job);
    if (is_exclusive(r.job)) continue;
    const bool started = j.first >= 0;
    j.kept_off = std::any_of(exclusive_.begin(), exclusive_.end(), [&](const Exclusive& e) {
      return (e.started || !started) && overlap(r.first, r.size, e.first, e.size);
    });
    if (!j.kept_off) kept_.push_back(r);
  }
  return kept_;
}

void GangCore::first_start(const gang::SlotJob& r, SlotState& j, Seconds now,
                           std::vector<CoreDecision>& into) {
  if (j.first >= 0) return;  // a sparse id without a has-run byte
  j.first = r.first;
  j.size = r.size;
  j.last_slot = slots_;
  --not_run_;
  details_.at(r.job).start = now;
  mark_run(r.job, true);
  into.push_back(
      {CoreDecision::Kind::kStart, r.job, partition_nodes(r.first, r.size), std::nullopt});
}

void GangCore::switch_reported(const std::vector<gang::SlotJob>& next, Seconds now) {
  // Switch out the jobs of the last slot that do not run in this one, then switch in.
  switched_in_.clear();
  for (const gang::SlotJob& r : next) {
    SlotState& j = jobs_.at(r.job);
    if (j.first < 0)
      first_start(r, j, now, switched_in_);
    else if (j.last_slot != slots_ - 1)
      switched_in_.push_back({CoreDecision::Kind::kResume, r.job, {}, std::nullopt});
    j.last_slot = slots_;
  }
  for (const gang::SlotJob& r : slot_) {
    const SlotState* previous = jobs_.find(r.job);
    if (previous && previous->last_slot == slots_ - 1)
      result_.decisions.push_back({CoreDecision::Kind::kSuspend, r.job, {}, std::nullopt});
  }
  for (CoreDecision& d : switched_in_) result_.decisions.push_back(std::move(d));
}

CoreSnapshot GangCore::snapshot() const {
  CoreSnapshot s;
  // Jobs in submit order (the order of their submit calls), started or not.
  for (const PolicyCall& c : calls_) {
    if (c.kind != PolicyCall::Kind::kSubmit) continue;
    const SlotState* found = jobs_.find(c.job);
    if (!found) continue;
    const SlotState& j = *found;
    const Details& d = details_.at(c.job);
    if (j.first < 0) {
      s.queue.push_back(d.job);
    } else {
      s.running_jobs.push_back(d.job);
      s.running.push_back(
          {c.job, d.start, d.start + d.job.time_limit, partition_nodes(j.first, j.size), j.size});
    }
    if (j.idle) s.idle.push_back(c.job);
    if (j.withdrawn) s.withdrawn.push_back(c.job);
  }
  s.down = NodeSet(order_.size());
  s.last_pass = last_pass_;
  s.policy_calls = calls_;
  s.slot_end = slot_end_;
  return s;
}

Status GangCore::restore(const CoreSnapshot& s) {
  if (!calls_.empty() || policy_.jobs_in_system() != 0)
    return fail(Error::Code::kInternal, "restore() needs a fresh gang core");
  if (s.running.size() != s.running_jobs.size() || s.down.size() != order_.size() ||
      !s.down.empty() || !s.reservations.empty())
    return fail("the snapshot is not of this machine's gang core");
  for (const auto* jobs : {&s.queue, &s.running_jobs})
    for (const Job& j : *jobs)
      if (!jobs_.emplace(j.id, SlotState{}).second)
        return fail(job_text(j.id) + " appears twice in the snapshot");
      else
        details_.emplace(j.id, Details{j});

  // Replay the calls, checking each against the jobs it names first: the policies assume their
  // callers keep the rules (a finished job is not finished again), and a snapshot is input.
  std::unordered_set<JobId> live, suspended, in_slot;
  std::unordered_map<JobId, std::pair<int, int>> partitions;  // where the policy placed each job
  std::vector<JobId> placed_in_order;
  for (size_t i = 0; i < s.policy_calls.size(); ++i) {
    const PolicyCall& c = s.policy_calls[i];
    auto bad = [&](const std::string& why) {
      return fail("snapshot call " + std::to_string(i + 1) + ": " + why);
    };
    switch (c.kind) {
      case PolicyCall::Kind::kSubmit:
        if (live.count(c.job)) return bad(job_text(c.job) + " submitted twice");
        if (auto ok = policy_.submit(c.job, c.size); !ok) return bad(ok.error().message);
        live.insert(c.job);
        break;
      case PolicyCall::Kind::kNextSlot:
        if (c.job < 1) return bad("a run of no slots");
        for (JobId k = 0; k < c.job; ++k) {
          slot_ = policy_.next_slot();
          in_slot.clear();
          for (const gang::SlotJob& r : slot_) {
            in_slot.insert(r.job);
            if (partitions.emplace(r.job, std::pair{r.first, r.size}).second)
              placed_in_order.push_back(r.job);
          }
        }
        break;
      case PolicyCall::Kind::kFinish:
        if (!live.count(c.job)) return bad(job_text(c.job) + " finished but not in the system");
        if (!partitions.count(c.job)) return bad(job_text(c.job) + " finished before it ran");
        policy_.finish(c.job);
        live.erase(c.job);
        suspended.erase(c.job);
        break;
      case PolicyCall::Kind::kSuspend:
        if (!in_slot.count(c.job) || suspended.count(c.job))
          return bad(job_text(c.job) + " suspended but not running");
        if (policy_.suspend(c.job)) suspended.insert(c.job);
        break;
      case PolicyCall::Kind::kResume:
        if (!suspended.count(c.job)) return bad(job_text(c.job) + " resumed but not suspended");
        policy_.resume(c.job);
        suspended.erase(c.job);
        break;
    }
    calls_.push_back(c);
  }

  // The replayed policy must hold exactly the snapshot's jobs, started ones on their nodes.
  if (live.size() != jobs_.size()) return fail("the snapshot's calls do not match its jobs");
  JobId missing = 0;
  if (!jobs_.all_of([&](JobId id, const SlotState&) { return live.count(missing = id) > 0; }))
    return fail(job_text(missing) + " is in the snapshot but not in its calls");
  for (const RunningJob& r : s.running) {
    auto at = partitions.find(r.id);
    if (at == partitions.end() || partition_nodes(at->second.first, at->second.second) != r.nodes)
      return fail(job_text(r.id) + ": its nodes in the snapshot are not its partition");
    SlotState& j = jobs_.at(r.id);
    j.first = at->second.first;
    j.size = at->second.second;
    mark_run(r.id, true);
    details_.at(r.id).start = r.start;
  }
  // (Placed is not started when the core keeps a job off exclusive jobs' nodes.)
  if (!options_.exclusive_jobs) {
    for (const Job& j : s.queue)
      if (partitions.count(j.id))
        return fail(job_text(j.id) + " ran but is queued in the snapshot");
  }
  not_run_ = static_cast<long>(s.queue.size());
  for (JobId id : s.idle) {
    if (!suspended.count(id)) return fail(job_text(id) + " is idle in the snapshot but running");
    jobs_.at(id).idle = true;
  }
  for (JobId id : s.withdrawn) {
    SlotState* found = jobs_.find(id);
    if (!found || found->first >= 0)
      return fail(job_text(id) + " is withdrawn in the snapshot but not waiting");
    if (!found->withdrawn) ++withdrawn_waiting_;
    found->withdrawn = true;
  }
  // Exclusive jobs line up in the order the policy first placed them; those running have started.
  for (JobId id : placed_in_order) {
    const SlotState* j = jobs_.find(id);
    if (j == nullptr || !is_exclusive(id)) continue;
    const auto [first, size] = partitions.at(id);
    exclusive_.push_back({id, first, size, j->first >= 0});
  }
  jobs_.for_each([&](JobId id, const SlotState&) { exclusive_in_system_ += is_exclusive(id); });
  // The current slot is what the last next_slot() returned (jobs in it may have ended since); with
  // exclusive jobs, as it ran: its jobs that have started, and the started exclusive ones.
  if (options_.exclusive_jobs) {
    std::vector<gang::SlotJob> ran;
    for (const Exclusive& e : exclusive_)
      if (e.started) ran.push_back({e.job, e.first, e.size});
    for (const gang::SlotJob& r : slot_) {
      const SlotState* j = jobs_.find(r.job);
      if (j != nullptr && j->first >= 0 && !is_exclusive(r.job)) ran.push_back(r);
    }
    slot_ = std::move(ran);
  }
  slots_ = 1;
  for (const gang::SlotJob& r : slot_)
    if (SlotState* j = jobs_.find(r.job)) j->last_slot = slots_;
  last_pass_ = s.last_pass;
  slot_end_ = s.slot_end;
  return Ok{};
}

}  // namespace trellis
