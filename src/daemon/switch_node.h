// SwitchNode: an agent's part in a gang switch (seed 002's SCore-D node daemon). The controller
// sends a Switch to the root of a tree of agents; each agent forwards it to its children in
// parallel, does its own three phases meanwhile, waits for every child (the barrier) and answers
// with its children's replies folded into its own (the reduction):
//   freeze   the outgoing jobs' processes on this agent, confirmed (daemon/freezer.h);
//   collect  what each frozen job's processes did in the slot (daemon/job_activity.h): the
//            controller learns from the sums whether a job is globally idle or stopped;
//   thaw     the incoming jobs (a job in both lists is frozen, looked at and thawed).
// Every phase is local to a node, so one round trip carries all three: with no messages in flight
// between nodes (jobs here talk over the host's network, which needs no draining), a node may
// thaw its incoming job as soon as its own outgoing one is frozen. A child that does not answer
// in time is reported (failed) with the subtree it should have passed the switch to (unreached),
// so that the controller can send the switch to those agents again in a tree without it.
//
// It also keeps which jobs are frozen here, so that a task launched after its job was frozen
// starts frozen, and a job that is signalled (cancelled, out of time) is thawed to receive it.
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "daemon/auth.h"
#include "daemon/freezer.h"
#include "daemon/job_activity.h"
#include "daemon/task_runner.h"
#include "trellis/v1/trellis.grpc.pb.h"

namespace trellis {

// The children of one agent in a switch tree and the subtree each passes the switch on to:
// `subtree` split into at most `fanout` consecutive runs of nearly equal length, each run's first
// agent being the child. A tree of n agents so built is about log_fanout(n) deep.
struct SwitchChild {
  std::string agent;
  std::vector<std::string> subtree;
};
std::vector<SwitchChild> switch_children(const std::vector<std::string>& subtree, int fanout);

// A stub for calling the agent at `address` ("host:port"), on a channel that retries a lost
// connection within a second (a restarted agent is reached again at the next switch).
std::shared_ptr<v1::Agent::Stub> new_agent_stub(const std::string& address);

// The limits a Switch request must keep (an agent refuses others with INVALID_ARGUMENT).
constexpr int kMaxSwitchAgents = 4096;
constexpr int kMaxSwitchFanout = 64;
constexpr int kMaxSwitchJobs = 100000;
Status check_switch_request(const v1::SwitchRequest& request);

// Folds a child's reply into `into`: sums the activity of the same job, keeps the slowest phase
// times, adds agents, failures and errors.
void merge_switch_reply(const v1::SwitchReply& child, v1::SwitchReply& into);

class SwitchNode {
 public:
  // `runner` must outlive the node. `address` is this agent's own, for error messages.
  SwitchNode(TaskRunner& runner, Freezer freezer, std::string munge_socket, std::string address);
  ~SwitchNode();  // removes the agent's cgroup when no job is left in it
  SwitchNode(const SwitchNode&) = delete;
  SwitchNode& operator=(const SwitchNode&) = delete;

  FreezeMethod freeze_method() const { return freezer_.method(); }

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

  // --- The switch: forwards, does this agent's phases, waits for the children and answers.
  // `request` must have passed check_switch_request().
  v1::SwitchReply handle(const v1::SwitchRequest& request);

 private:
  using Key = std::pair<int64_t, int>;  // (job, attempt)
  static std::string group_name(const Key& key);
  // The running tasks of each job of `keys` on this agent.
  std::map<Key, std::vector<TaskInfo>> tasks_of(const std::set<Key>& keys) const;
  v1::SwitchReply forward(const SwitchChild& child, const v1::SwitchRequest& request,
                          double deadline_seconds);
  std::shared_ptr<v1::Agent::Stub> stub(const std::string& agent);

  TaskRunner& runner_;
  Freezer freezer_;
  CredentialSource credentials_;
  std::string address_;
  std::mutex mutex_;         // frozen_, stubs_
  std::mutex switch_mutex_;  // one switch at a time
  std::mutex launch_mutex_;  // see hold_for_launch()
  std::set<Key> frozen_;
  ActivityMonitor monitor_;
  std::map<std::string, std::shared_ptr<v1::Agent::Stub>> stubs_;
};

}  // namespace trellis
