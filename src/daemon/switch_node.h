// SwitchNode: an agent's part in a gang switch (seed 002's SCore-D node daemon). The controller
// sends the switch down the control tree (daemon/tree/tree_node.h); each agent forwards it to its
// children in parallel, does its own three phases here meanwhile, waits for every child (the
// barrier) and answers with its children's replies folded into its own (the reduction):
//   freeze   the outgoing jobs' processes on this agent, confirmed (daemon/freezer.h);
//   collect  what each frozen job's processes did since its previous look (daemon/job_activity.h):
//            the controller learns from the sums whether a job is globally idle or stopped. Only
//            for the outgoing jobs the controller asks about (not in the switch's skip_activity:
//            it asks every few switch-outs of a job, see activity_wanted() in
//            daemon/agent_link.h) and the probed ones;
//   thaw     the incoming jobs (a job in both lists is frozen, looked at and thawed).
// Every phase is local to a node, so one round trip carries all three: with no messages in flight
// between nodes (jobs here talk over the host's network, which needs no draining), a node may
// thaw its incoming job as soon as its own outgoing one is frozen.
//
// It also keeps which jobs are frozen here, so that a task launched after its job was frozen
// starts frozen, and a job that is signalled (cancelled, out of time) is thawed to receive it.
// Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "daemon/freezer.h"
#include "daemon/job_activity.h"
#include "daemon/task_runner.h"
#include "daemon/tree/tree_shape.h"  // switch_children(), the tree's old name
#include "trellis/v1/trellis.grpc.pb.h"

namespace trellis {

class SwitchNode {
 public:
  // `runner` must outlive the node. `address` is this agent's own, for error messages.
  SwitchNode(Tasks& runner, Freezer freezer, std::string address);
  ~SwitchNode();  // removes the agent's cgroup when no job is left in it
  SwitchNode(const SwitchNode&) = delete;
  SwitchNode& operator=(const SwitchNode&) = delete;

  FreezeMethod freeze_method() const { return freezer_.method(); }
  // Called (with the launch held) with a job attempt's group name, "JOB.ATTEMPT", once none of
  // its tasks is left here, after its freezer cgroup is removed: the agent removes its limits'
  // cgroups then (daemon/resource_limits.h). Set before the first launch.
  void on_group_gone(std::function<void(const std::string&)> gone) {
    group_gone_ = std::move(gone);
  }

  // --- Launches
  // Held while a launch request's tasks are started: ended() waits for it, so that a job's cgroup
  // is never removed between the start of one of its tasks and the next (that task's process
  // would find no cgroup to join); and a switch's freeze and thaw wait for it, so that no cgroup
  // is frozen while a process is joining it. (A process that joins a frozen cgroup freezes before
  // its exec, and its shepherd, which waits for that exec, with it: every later launch on the
  // agent would hang behind it.)
  std::unique_lock<std::mutex> hold_for_launch() { return std::unique_lock(launch_mutex_); }
  // Called with the launch held, before the job's tasks are started: a job frozen here has its
  // cgroup thawed for the launch, and started() freezes it again once they have. Its processes
  // run meanwhile, for as long as the launch takes.
  void thaw_for_launch(int64_t job, int attempt);
  // The cgroup.procs file the job's tasks join ("" with signals), for TaskSpec::cgroup_procs.
  Result<std::string> cgroup_for(int64_t job, int attempt);
  // Tasks of the job have started (with the launch held): if the job is frozen here, it is
  // frozen again now, new tasks included.
  void started(int64_t job, int attempt);
  // The job is about to be signalled: a frozen job is thawed so that the signal acts on it (a
  // cancelled job is not meant to stay frozen).
  void before_signal(int64_t job, int attempt);
  // The tasks were acknowledged (ended and recorded): their cgroups and activity are dropped.
  void ended(const std::vector<TaskKey>& tasks);

  // --- The switch: this agent's three phases (the tree forwards and folds the replies).
  v1::SwitchReply switch_here(const v1::GangSwitch& request);

 private:
  using Key = std::pair<int64_t, int>;  // (job, attempt)
  static std::string group_name(const Key& key);
  // The running tasks of each job of `keys` on this agent.
  std::map<Key, std::vector<TaskInfo>> tasks_of(const std::set<Key>& keys) const;

  Tasks& runner_;
  Freezer freezer_;
  std::function<void(const std::string&)> group_gone_;
  std::string address_;
  std::mutex mutex_;         // frozen_
  std::mutex switch_mutex_;  // one switch at a time
  std::mutex launch_mutex_;  // see hold_for_launch()
  std::set<Key> frozen_;
  ActivityMonitor monitor_;
  // The /proc/PID/stat files of each job's processes looked at by the last switch, kept open for
  // the next (daemon/proc_stat.h: open_proc_stat). Closed once a process is gone from its job's
  // cgroup or has ended, and when the job has ended here.
  std::mutex stat_mutex_;
  std::map<Key, std::map<pid_t, int>> stat_files_;  // guarded by stat_mutex_
  // The stat of `pid` of `key`'s job, from its kept file (opened if need be).
  Result<ProcStat> stat_of(const Key& key, pid_t pid);
  // Closes `key`'s kept files but those of `keep` (all of them when `keep` is empty).
  void close_stats(const Key& key, const std::vector<pid_t>& keep);
};

}  // namespace trellis
