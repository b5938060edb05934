#include <algorithm>

#include "core/hostlist.h"
#include "daemon/controller.h"
#include "daemon/log.h"

// Concurrent allocation ([controller] allocation = "concurrent", controller.h): following the
// starts other controllers commit, checking in, and adopting the pending jobs of a controller
// that stopped. The pass itself (a partial commit, refused starts placed again) is in
// controller_pass.cc.

namespace trellis {

Result<bool> Controller::follow_foreign_start(const StoredJob& job, Seconds now) {
  const JobId id = job.id;
  // Requeued since: whose queue it is in now is read again rather than guessed.
  if (!is_final(job.state) && (!holds_nodes(job.state) || job.nodes.empty())) return false;
  if (waiting_.count(id)) return false;
  // This controller thought it its own to place (ownership moved while both looked): it leaves
  // the queue, since the other started it.
  if (auto mine = pending_.find(id); mine != pending_.end()) {
    (void)core_->cancel(id, now);
    pending_.erase(mine);
    notes_.erase(id);
  }
  // Ended since (short jobs often end before another controller reads their start): it holds
  // nothing here, and its end event, replayed later, finds nothing to end. Reading the whole
  // store again for it was most of the rebuilds with several concurrent controllers.
  if (is_final(job.state)) return true;
  RunningJob r;
  r.id = id;
  r.start = job.start_time;
  r.expected_end = job.start_time + job.time_limit;
  r.nodes = NodeSet::of(machine_.node_count(), job.nodes);
  r.node_count = static_cast<int>(job.nodes.size());
  if (Status added = batch_->add_running(core_job(job), r); !added) {
    // Its nodes are held here by a job the store says has ended: the memory is behind.
    return false;
  }
  running_[id] = LiveJob::of(job);
  return true;
}

Status Controller::check_in(Seconds now) {
  if (now < next_check_in_) return Ok{};
  next_check_in_ = now + kCheckInEvery;
  Result<std::vector<std::string>> live = store_.check_in(identity_, now, kCheckInTtl);
  if (!live) return live.error();
  if (!home_region_) return Ok{};
  // Its share of the machine: an equal run of nodes for each controller checked in, in name
  // order. A pure function of the rows every controller reads, so that all cut the same shares
  // and they move only when a controller comes or goes. (Shares sized by each queue's demand were
  // measured: queues empty and fill within a check-in, so shares moved all the time, each
  // controller cut them at its own moment, and commits met where they overlapped.)
  auto me = std::find(live->begin(), live->end(), identity_);
  if (live->size() < 2 || me == live->end())
    home_region_->set_home(std::nullopt);
  else
    home_region_->set_home(HomeRegion::share(machine_.node_count(),
                                             static_cast<int>(me - live->begin()),
                                             static_cast<int>(live->size())));
  return Ok{};
}

Status Controller::adopt_orphans(Seconds now) {
  if (!concurrent_ || !scheduler_ || now < next_adoption_) return Ok{};
  next_adoption_ = now + kAdoptEvery;
  Result<AdoptedJobs> adopted = store_.adopt_jobs(identity_, now);
  if (!adopted) return adopted.error();
  if (adopted->pending.empty() && adopted->holding.empty()) return Ok{};
  log_line(identity_ + " adopted " + std::to_string(adopted->pending.size()) + " pending and " +
           std::to_string(adopted->holding.size()) +
           " started jobs of controllers that stopped checking in (none for " +
           std::to_string(static_cast<int>(kCheckInTtl)) +
           " s) or that no controller owned; every controller reads the store again");
  // The "adopt" event makes every controller, this one too, read the store again (sync()).
  pass_wanted_ = true;
  if (adopted->holding.empty()) return Ok{};
  // A started job's controller may have stopped after committing its start and before every
  // agent had its launch, or after committing its stop and before the kill went out: nothing
  // else would ever run it, or end it. Sent again as a rebuild with the lease does: a launch that
  // arrived is a no-op at the agent (same job and attempt), and a task that ended is re-reported.
  JobQuery query;
  query.ids = adopted->holding;
  Result<std::vector<StoredJob>> jobs = store_.list_jobs(query);
  if (!jobs) return jobs.error();
  for (const StoredJob& job : *jobs) {
    if (!holds_nodes(job.state) || job.nodes.empty()) continue;  // ended since
    log_line("job " + std::to_string(job.id) + " attempt " + std::to_string(job.attempt) +
             " launched again on " + std::to_string(job.nodes.size()) + " nodes by " + identity_ +
             ": its controller stopped checking in while it held nodes");
    send_launch(job, job.attempt, job.nodes, Launching::kAgain);
    if (job.stop != StopCause::kNone) send_signal(job.id, job.attempt, job.nodes, 0);
  }
  return Ok{};
}

int64_t Controller::conflicts() const {
  std::lock_guard lock(mutex_);
  return conflicts_;
}

}  // namespace trellis
