// The controller's gang scheduling: the GangCore, its switches, global state detection and the
// state that lets a restarted controller resume time-sharing (see controller.h).
#include <signal.h>

#include <algorithm>
#include <sstream>

#include "core/number_text.h"
#include "daemon/controller.h"
#include "daemon/log.h"
#include "sched/gang/registry.h"

namespace trellis {
namespace {

constexpr std::string_view kGangStateHeader = "trellis-gang-state 1";

char call_letter(PolicyCall::Kind kind) {
  switch (kind) {
    case PolicyCall::Kind::kSubmit:
      return 'S';
    case PolicyCall::Kind::kNextSlot:
      return 'N';
    case PolicyCall::Kind::kFinish:
      return 'F';
    case PolicyCall::Kind::kSuspend:
      return 'U';
    case PolicyCall::Kind::kResume:
      return 'R';
  }
  return '?';
}

std::optional<PolicyCall::Kind> call_kind(char letter) {
  switch (letter) {
    case 'S':
      return PolicyCall::Kind::kSubmit;
    case 'N':
      return PolicyCall::Kind::kNextSlot;
    case 'F':
      return PolicyCall::Kind::kFinish;
    case 'U':
      return PolicyCall::Kind::kSuspend;
    case 'R':
      return PolicyCall::Kind::kResume;
    default:
      return std::nullopt;
  }
}

// What gang_state_text() saves beyond the core's snapshot: one running job's switch state.
struct SavedSwitchState {
  int attempt = 0;
  bool frozen = false;
  bool idle = false;
  Seconds frozen_since = 0;
  Seconds frozen_before = 0;
};

struct SavedGangState {
  std::vector<PolicyCall> calls;
  std::vector<JobId> idle, withdrawn;
  Seconds slot_end = 0;
  std::map<JobId, SavedSwitchState> jobs;
};

// Reads gang_state_text()'s format; an error names the line.
Result<SavedGangState> parse_gang_state(const std::string& text) {
  SavedGangState saved;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  auto bad = [&](const std::string& why) {
    return fail("the gang core state in the store, line " + std::to_string(number) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++number;
    if (number == 1) {
      if (line != kGangStateHeader) return bad("not a gang core state (a queue policy's?)");
      continue;
    }
    std::istringstream words(line);
    std::string what;
    words >> what;
    if (what == "slot_end") {
      words >> saved.slot_end;
    } else if (what == "call") {
      std::string letter;
      PolicyCall call;
      words >> letter >> call.job >> call.size;
      std::optional<PolicyCall::Kind> kind =
          letter.size() == 1 ? call_kind(letter[0]) : std::nullopt;
      if (!kind) return bad("unknown call '" + letter + "'");
      call.kind = *kind;
      saved.calls.push_back(call);
    } else if (what == "idle" || what == "withdrawn") {
      JobId id = 0;
      words >> id;
      (what == "idle" ? saved.idle : saved.withdrawn).push_back(id);
    } else if (what == "job") {
      JobId id = 0;
      SavedSwitchState job;
      int frozen = 0, idle = 0;
      words >> id >> job.attempt >> frozen >> idle >> job.frozen_since >> job.frozen_before;
      job.frozen = frozen != 0;
      job.idle = idle != 0;
      saved.jobs[id] = job;
    } else if (!what.empty()) {
      return bad("unknown entry '" + what + "'");
    }
    if (words.fail()) return bad("malformed: '" + line + "'");
  }
  return saved;
}

}  // namespace

Result<bool> Controller::open_gang() {
  const gang::GangPolicyRegistry& registry = gang::GangPolicyRegistry::builtin();
  if (!registry.find(config_.controller.policy)) return false;
  const int n = machine_.node_count();
  Result<std::unique_ptr<gang::GangScheduler>> policy =
      registry.create(config_.controller.policy, n, gang::GangPolicyOptions{});
  if (!policy) return fail("[controller] policy: " + policy.error().message);
  const Curve* curve = allocator_->node_order();
  GangCoreOptions options;
  options.slice = config_.controller.slice;
  options.empty_slot = config_.controller.slice;
  options.report_switches = true;  // the agents must freeze and thaw
  options.exclusive_jobs = true;   // jobs without --share keep whole nodes
  // A fresh policy and core: a rebuild replays the saved calls into them.
  core_.reset();
  gang_policy_ = std::move(*policy);
  auto core =
      std::make_unique<GangCore>(*gang_policy_, curve ? *curve : Curve::identity(n), options);
  gang_ = core.get();
  core_ = std::move(core);
  return true;
}

Seconds Controller::frozen_seconds(JobId id, Seconds now) const {
  auto live = running_.find(id);
  if (live == running_.end()) return 0;
  const LiveJob& j = live->second;
  return j.frozen_before + (j.frozen ? std::max<Seconds>(0, now - j.frozen_since) : 0);
}

std::string Controller::gang_state_text(Seconds now) const {
  (void)now;
  CoreSnapshot snapshot = gang_->snapshot();
  // Line by line into a stream: one entry per call, idle or withdrawn job and running job.
  std::ostringstream out;
  out << kGangStateHeader << "\nslot_end " << exact_number(snapshot.slot_end) << "\n";
  for (const PolicyCall& c : snapshot.policy_calls)
    out << "call " << call_letter(c.kind) << " " << c.job << " " << c.size << "\n";
  for (JobId id : snapshot.idle) out << "idle " << id << "\n";
  for (JobId id : snapshot.withdrawn) out << "withdrawn " << id << "\n";
  for (const auto& [id, live] : running_)
    out << "job " << id << " " << live.attempt << " " << (live.frozen ? 1 : 0) << " "
        << (live.idle ? 1 : 0) << " " << exact_number(live.frozen_since) << " "
        << exact_number(live.frozen_before) << "\n";
  return out.str();
}

Status Controller::restore_gang(CoreSnapshot& snapshot, const std::string& text, Seconds now) {
  if (Result<bool> fresh = open_gang(); !fresh) return fresh.error();
  SavedGangState saved;
  if (!text.empty()) {
    Result<SavedGangState> parsed = parse_gang_state(text);
    if (!parsed) {
      log_line(parsed.error().message + "; time-sharing starts again from the store's jobs");
    } else {
      saved = std::move(*parsed);
    }
  }
  // Fix the log up where the store moved on after it was saved (a crash between a change and the
  // next pass's commit): jobs that ended leave, jobs submitted since join at the end.
  std::set<JobId> in_log, ran;
  for (const PolicyCall& c : saved.calls) {
    if (c.kind == PolicyCall::Kind::kSubmit) in_log.insert(c.job);
    if (c.kind == PolicyCall::Kind::kFinish) in_log.erase(c.job);
  }
  std::set<JobId> active;
  for (const Job& j : snapshot.queue) active.insert(j.id);
  for (const Job& j : snapshot.running_jobs) active.insert(j.id);
  std::set<JobId> withdrawn(saved.withdrawn.begin(), saved.withdrawn.end());
  for (JobId id : in_log) {
    if (active.contains(id)) continue;
    Result<StoredJob> gone = store_.job(id);
    if (gone && gone->start_time > 0 && !withdrawn.contains(id)) {
      saved.calls.push_back({PolicyCall::Kind::kFinish, id, 0});
    } else {
      // Cancelled before it ran: withdrawn (the core drops it when the policy picks it).
      Job placeholder;
      placeholder.id = id;
      if (gone) placeholder = core_job(*gone);
      placeholder.request.nodes = std::max(placeholder.request.nodes, 1);
      snapshot.queue.push_back(placeholder);
      withdrawn.insert(id);
    }
  }
  for (const Job& j : snapshot.queue)
    if (!in_log.contains(j.id) && !withdrawn.contains(j.id))
      saved.calls.push_back({PolicyCall::Kind::kSubmit, j.id, j.request.nodes});
  snapshot.policy_calls = saved.calls;
  snapshot.withdrawn.assign(withdrawn.begin(), withdrawn.end());
  for (JobId id : saved.idle)
    if (active.contains(id)) snapshot.idle.push_back(id);
  snapshot.slot_end = saved.slot_end;

  Status restored = core_->restore(snapshot);
  if (!restored) {
    // The schedule cannot be resumed (a running job is not where the log puts it): no job is
    // lost, but the running ones start again, since a job never migrates.
    log_line("gang schedule not restored (" + restored.error().message +
             "): the running jobs are requeued");
    if (Result<bool> fresh = open_gang(); !fresh) return fresh.error();
    CoreSnapshot queued;
    queued.down = NodeSet(machine_.node_count());
    queued.last_pass = now;
    queued.queue = snapshot.queue;
    for (const Job& j : snapshot.queue)
      queued.policy_calls.push_back({PolicyCall::Kind::kSubmit, j.id, j.request.nodes});
    if (Status ok = core_->restore(queued); !ok)
      return fail(Error::Code::kInternal, "rebuilding the gang scheduler: " + ok.error().message);
    std::vector<std::pair<JobId, LiveJob>> running(running_.begin(), running_.end());
    for (const auto& [id, live] : running) {
      send_signal(id, live.attempt, live.nodes, SIGKILL);
      if (Status ok = finish(id, live.attempt, JobState::kPending,
                             "requeued: the gang schedule could not be restored", now);
          !ok)
        return ok;
    }
    return Ok{};
  }
  // The running jobs' switch state. The restored core is at its last saved slot (up to
  // kGangStateInterval old: slots are not saved one by one), so the jobs of that slot run and the
  // others are frozen from now on; the frozen times saved are kept (those since the save are
  // lost: a job's limit comes at most that much early).
  // A job suspended by an administrator (rebuild() read it from the store) stays frozen, and out
  // of the rotation: the core skips it unless it did already when the state was saved.
  std::set<JobId> in_slot;
  for (const gang::SlotJob& r : gang_->slot()) in_slot.insert(r.job);
  for (auto& [id, live] : running_) {
    auto s = saved.jobs.find(id);
    bool known = s != saved.jobs.end() && s->second.attempt == live.attempt;
    bool suspended = admin_suspended_.contains(id);
    live.idle = known && s->second.idle && !suspended;
    live.frozen = suspended || (!live.idle && !in_slot.contains(id));
    live.frozen_since = known && s->second.frozen ? s->second.frozen_since : now;
    live.frozen_before = known ? s->second.frozen_before : 0;
    live.limit_at += live.frozen_before;
  }
  std::set<JobId> skipped(snapshot.idle.begin(), snapshot.idle.end());
  for (JobId id : admin_suspended_)
    if (!skipped.contains(id)) skip_suspended(id, now);
  // The agents may have missed the last switches: the scheduler tells them the whole state once
  // (a controller that does not schedule leaves the agents alone).
  std::vector<JobId> freeze, thaw;
  for (const auto& [id, live] : running_) (live.frozen ? freeze : thaw).push_back(id);
  if (scheduler_ && !running_.empty()) send_switch(freeze, thaw, now);
  gang_log_dirty_ = true;
  return Ok{};
}

void Controller::switch_jobs(const PassResult& decided, Seconds now) {
  std::vector<JobId> freeze, thaw;
  for (const CoreDecision& d : decided.decisions) {
    auto live = running_.find(d.job);
    if (live == running_.end()) continue;
    LiveJob& j = live->second;
    if (d.kind == CoreDecision::Kind::kSuspend) {
      // A job skipped as idle stays thawed: it uses no CPU, and a probe sees it wake up.
      if (j.frozen || j.idle) continue;
      j.frozen = true;
      j.frozen_since = now;
      freeze.push_back(d.job);
    } else if (d.kind == CoreDecision::Kind::kResume) {
      // An administrator's suspension outlasts the schedule: only a resume thaws it.
      if (!j.frozen || admin_suspended_.contains(d.job)) continue;
      j.thaw(now);
      thaw.push_back(d.job);
    }
  }
  // Suspended jobs whose slot came: the core skips them from the next slot on, which comes at
  // once, so that their nodes go to other jobs (a job the policy cannot skip keeps its slots,
  // frozen, and is not asked again).
  for (auto it = leaving_rotation_.begin(); it != leaving_rotation_.end();) {
    const bool running = running_.contains(*it);
    if (running && !in_current_slot(*it)) {
      ++it;
      continue;
    }
    if (running) {
      (void)core_->idle(*it, now);
      gang_log_dirty_ = true;
      pass_wanted_ = true;
    }
    it = leaving_rotation_.erase(it);
  }
  // Jobs found waiting for input in their last slot that run in this one: the core skips them
  // from the next slot on (GangCore::idle wants a job of the current slot).
  for (auto it = found_idle_.begin(); it != found_idle_.end();) {
    auto live = running_.find(*it);
    if (live == running_.end()) {
      it = found_idle_.erase(it);
      continue;
    }
    if (!live->second.frozen && core_->idle(*it, now)) {
      live->second.idle = true;
      gang_log_dirty_ = true;
      it = found_idle_.erase(it);
      continue;
    }
    ++it;
  }
  send_switch(std::move(freeze), std::move(thaw), now);
}

int64_t Controller::send_switch(std::vector<JobId> freeze, std::vector<JobId> thaw, Seconds now) {
  (void)now;
  SwitchOrder order;
  std::vector<NodeId> nodes;
  auto add = [&](std::vector<SwitchOrder::JobAttempt>& into, JobId id) {
    auto live = running_.find(id);
    if (live == running_.end()) return;
    into.push_back({id, live->second.attempt});
    nodes.insert(nodes.end(), live->second.nodes.begin(), live->second.nodes.end());
  };
  for (JobId id : freeze) {
    add(order.freeze, id);
    auto live = running_.find(id);
    if (live == running_.end()) continue;
    // Its activity is looked at every few switch-outs only, and never while an administrator
    // holds it (switch_done() would not use it).
    const int switch_out = ++live->second.switch_outs;
    if (admin_suspended_.contains(id) ||
        !activity_wanted(switch_out, config_.controller.activity_every))
      order.skip_activity.push_back({id, live->second.attempt});
  }
  for (JobId id : thaw) add(order.thaw, id);
  for (const auto& [id, live] : running_)
    if (live.idle && live.stop == StopCause::kNone) add(order.probe, id);
  if (order.freeze.empty() && order.thaw.empty() && order.probe.empty()) return 0;
  order.agents = agents_of(nodes);
  if (order.agents.empty()) return 0;
  order.id = ++switches_sent_;
  const int64_t id = order.id;
  agents_.gang_switch(std::move(order));
  return id;
}

void Controller::switch_done(const SwitchOutcome& outcome, Seconds now) {
  auto lock = lock_memory();
  if (!gang_ || !scheduler_) return;
  for (const std::string& error : outcome.reply.errors())
    log_line("gang switch " + std::to_string(outcome.order.id) + ": " + error);
  std::set<JobId> probed;
  for (const auto& p : outcome.order.probe) probed.insert(p.first);
  // A woken job frozen again until its slot: that freeze comes moments after the probe that saw
  // it run, too soon for /proc to show CPU time used between the two, so what it collects says
  // nothing of the job's state.
  std::set<JobId> refrozen;
  if (refreezes_.erase(outcome.order.id) > 0)
    for (const auto& f : outcome.order.freeze) refrozen.insert(f.first);
  std::vector<JobId> refreeze;
  for (const v1::JobActivity& a : outcome.reply.activity()) {
    auto live = running_.find(a.job_id());
    if (live == running_.end() || live->second.attempt != a.attempt() || a.processes() == 0)
      continue;
    LiveJob& j = live->second;
    // Frozen by an administrator: neither idle nor stopped, whatever its processes do.
    if (admin_suspended_.contains(a.job_id()) || refrozen.contains(a.job_id())) continue;
    const bool all_wait_for_messages =
        a.waiting_message() == a.processes() && a.waiting_input() == 0;
    // A probed idle job is looked at only to see whether it runs again, or whether it has come
    // to wait for messages only (it was first seen before all its processes said so).
    if (probed.contains(a.job_id()) && (a.running() > 0 || !all_wait_for_messages)) {
      // An idle job that runs again has had its input: back into the rotation, frozen until
      // its slot comes.
      if (j.idle && a.running() > 0) {
        (void)core_->busy(a.job_id(), now);
        j.idle = false;
        gang_log_dirty_ = true;
        pass_wanted_ = true;
        if (!j.frozen) {
          j.frozen = true;
          j.frozen_since = now;
          refreeze.push_back(a.job_id());
        }
      }
      continue;
    }
    if (a.running() > 0) {
      found_idle_.erase(a.job_id());
      suspected_stopped_.erase(a.job_id());
      continue;
    }
    if (all_wait_for_messages) {
      // Globally stopped: every process waits for a message from another (a deadlock). A
      // message in flight looks the same for a moment, so it takes two switches in a row.
      if (suspected_stopped_.insert(a.job_id()).second) continue;
      if (deadlocked_.insert(a.job_id()).second) {
        std::string why = "globally stopped: all " + std::to_string(a.processes()) +
                          " processes wait for a message (deadlock)";
        log_line("job " + std::to_string(a.job_id()) + ": " + why);
        if (config_.controller.kill_deadlocked) {
          Result<JobState> after =
              store_.stop_job(a.job_id(), j.attempt, StopCause::kCancel, "killed: " + why, now);
          if (after && *after == JobState::kCompleting) {
            j.stop = StopCause::kCancel;
            send_signal(a.job_id(), j.attempt, j.nodes, 0);
          }
        } else if (j.stop == StopCause::kNone) {
          (void)store_.set_job_state(a.job_id(), JobState::kRunning, why, now);
        }
      }
      continue;
    }
    // Waits for input: skipped once its slot comes again (unless the site turned that off).
    if (config_.controller.idle_detection) found_idle_.insert(a.job_id());
  }
  if (!refreeze.empty()) {
    if (int64_t id = send_switch(refreeze, {}, now)) refreezes_.insert(id);
  }
}

void Controller::apply_suspend(JobId id, Seconds now) {
  auto live = running_.find(id);
  if (live == running_.end() || !admin_suspended_.insert(id).second) return;
  LiveJob& j = live->second;
  found_idle_.erase(id);
  suspected_stopped_.erase(id);
  // A job skipped as idle (left thawed) is skipped by the core already: it is frozen now, and no
  // longer probed.
  const bool skipped = j.idle;
  j.idle = false;
  if (!j.frozen) {
    j.frozen = true;
    j.frozen_since = now;
    send_switch({id}, {}, now);
  }
  pass_wanted_ = true;
  if (gang_ && !skipped) skip_suspended(id, now);
}

void Controller::apply_resume(JobId id, Seconds now) {
  if (admin_suspended_.erase(id) == 0) return;
  leaving_rotation_.erase(id);
  auto live = running_.find(id);
  if (live == running_.end()) return;
  LiveJob& j = live->second;
  pass_wanted_ = true;
  if (gang_) {
    // Back into the rotation. A job of the current slot runs now (the next pass switches it out
    // or leaves it running); another is thawed when its slot comes (switch_jobs()).
    (void)core_->busy(id, now);
    gang_log_dirty_ = true;
    if (!in_current_slot(id)) return;
  }
  if (!j.frozen) return;
  j.thaw(now);
  send_switch({}, {id}, now);
}

void Controller::skip_suspended(JobId id, Seconds now) {
  if (!in_current_slot(id)) {
    leaving_rotation_.insert(id);  // switch_jobs() asks when its slot comes
    return;
  }
  leaving_rotation_.erase(id);
  (void)core_->idle(id, now);
  gang_log_dirty_ = true;
  pass_wanted_ = true;
}

bool Controller::in_current_slot(JobId id) const {
  const std::vector<gang::SlotJob>& slot = gang_->slot();
  return std::any_of(slot.begin(), slot.end(), [&](const gang::SlotJob& r) { return r.job == id; });
}

}  // namespace trellis
