// AgentLauncher: an agent's thread that starts the tasks of the launches it accepted. A launch is
// checked and accepted at once (the control tree answers then: a launch of a thousand tasks no
// longer keeps its message, its tree or its sender waiting for a thousand forks), and its tasks
// start here one after another. Nothing else of the agent waits for it: liveness pings, gang
// switches, signals and exit reports run on other threads, and a switch waits at most for the
// one task being started (the launch is held per task, daemon/switch_node.h).
//
// Tasks still waiting when their job is signalled to stop (a cancel, a time limit, the kill of a
// requeued attempt) never start: they end at once as if killed by that signal, and are reported
// like any exit, so that the controller hears of every node of every attempt. Cleaning up after
// acknowledged exits (SwitchNode::ended) goes through the same thread, in order with the
// launches. An attempt terminated or killed here (signal 0 or SIGKILL) is remembered: a launch of
// it that comes later (a retry that took another route through the tree) starts nothing.
//
// A launch on whole nodes (no gang time-sharing) first kills what another job or attempt still
// runs on its nodes: the controller gives a node away only once the attempt that held it has
// ended, so such a task is a leftover whose kill was lost, and the new job must not share the
// node with it. The launch waits (boundedly) until the leftovers are gone. A launch sent again
// to reconcile (Nodes::kWholeIfFree) may come after its own attempt ended and its nodes went to
// another job, so it kills nothing: where another attempt runs on its nodes, it starts nothing.
//
//   AgentLauncher launcher(runner, switch_node, [&] { wake_reporter(); });
//   auto done = launcher.accept(job, attempt, std::move(specs));   // returns at once
//   done.wait();                                                    // (a caller that must)
//   launcher.drop(job, attempt, SIGTERM);                           // before signalling
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "daemon/switch_node.h"
#include "daemon/task_runner.h"

namespace trellis {

class AgentLauncher {
 public:
  // What became of one accepted launch, once every task of it was started, found known already,
  // or dropped: how many were started, and the first error.
  struct Outcome {
    int started = 0;
    int tasks = 0;
    std::string error;  // "" when every task started or was known
  };

  // `runner` and `switches` must outlive the launcher.
  // `limits`, when not null, holds each task with TaskSpec::limits to them (cgroups of its job
  // attempt's group, made just before it starts); it must outlive the launcher.
  AgentLauncher(Tasks& runner, SwitchNode& switches, ResourceLimits* limits = nullptr);
  ~AgentLauncher();  // tasks not yet started stay so (the next agent is told again)
  AgentLauncher(const AgentLauncher&) = delete;
  AgentLauncher& operator=(const AgentLauncher&) = delete;

  // What a launch may do about the tasks of other jobs and attempts on its nodes.
  enum class Nodes {
    kShared,  // gang time-sharing: they run beside it
    // A shared node (node_grants): other jobs run beside it on other CPUs; what another attempt
    // runs on its CPUs (TaskSpec::shared_cpus) is a leftover whose kill was lost, killed first.
    kSharedCores,
    // Its nodes were just given to it: what another attempt runs there is a leftover whose kill
    // was lost, and is killed first.
    kWhole,
    // Sent again to reconcile: where another attempt runs on its nodes, this launch is the late
    // one (its attempt ended and the nodes went on); it kills nothing and starts nothing.
    kWholeIfFree,
  };

  // Queues the tasks of one launch (all of one job attempt); the future is ready once they have
  // all been dealt with.
  std::shared_future<Outcome> accept(int64_t job, int attempt, std::vector<TaskSpec> tasks,
                                     Nodes nodes = Nodes::kShared);

  // Tasks of job `job` (`attempt` 0: any) not started yet never will: each ends as killed by
  // `signal` (SIGTERM for a terminate) and is reported. `attempt_over` (a terminate or SIGKILL of
  // one attempt): launches of that attempt accepted later start nothing either. Returns how many
  // were dropped.
  int drop(int64_t job, int attempt, int signal, bool attempt_over = false);

  // SwitchNode::ended for acknowledged tasks, after the launches accepted before.
  void ended(std::vector<TaskKey> keys);

  // Tasks waiting to start.
  size_t waiting() const;

  // Called (from the launcher's thread) for a task whose limits did not take: it is not
  // started and ends with exit 255; the node cannot hold jobs to their grants (the agent drains
  // it and has the job requeued). Set before the first accept().
  using LimitsFailed = std::function<void(const TaskKey& task, const std::string& why)>;
  void on_limits_failed(LimitsFailed call) { limits_failed_ = std::move(call); }

 private:
  struct Launch {
    uint64_t seq = 0;  // order of acceptance
    int64_t job = 0;
    int attempt = 0;
    Nodes use = Nodes::kShared;
    bool cleared = false;  // the leftovers on its nodes are gone, or it found its nodes taken
    std::set<std::string> nodes;
    std::deque<TaskSpec> tasks;
    Outcome outcome;
    std::promise<Outcome> promise;
    std::vector<TaskKey> ended;  // a cleanup instead of a launch, when not empty
  };
  // A drop() that applies to the launches accepted up to `seq` (their tasks being started as it
  // came are dropped too).
  struct Drop {
    uint64_t seq = 0;
    int64_t job = 0;
    int attempt = 0;
    int signal = 0;
  };
  void run();
  // Starts the next few tasks of `launches` (at most kTasksPerHold in all, in order) with the
  // launch held (a switch waits at most this long).
  void start_some(const std::vector<Launch*>& launches);
  // Applies `task`'s limits to its attempt's group and sets the files its process joins; an
  // error says why they did not take (the task is then not started).
  Status hold_to_limits(const Launch& launch, TaskSpec& task);
  // Answers a launch that has nothing left to start (callers hold mutex_).
  void complete(Launch& done);
  // The signal of a drop that applies to `launch`, or 0.
  int dropped(const Launch& launch) const;
  // The (job, attempt)s other than `launch`'s with tasks running on its nodes (kSharedCores: on
  // its tasks' CPUs there; a task whose CPUs are not known is never counted).
  std::set<std::pair<int64_t, int>> others_on_nodes(const Launch& launch) const;
  // Kills the tasks of other attempts still running on `launch`'s nodes and waits until they are
  // gone; false when some outlived the wait.
  bool clear_nodes(const Launch& launch);
  // Before the first task of a launch on whole nodes: clears them (kWhole), or finds them taken
  // (kWholeIfFree); the launch's tasks then end at once.
  void claim_nodes(Launch& launch);
  // Every task of `launch` still waiting ends at once (exit 255) because of `why`.
  void fail_waiting(Launch& launch, const std::string& why);

  Tasks& runner_;
  SwitchNode& switches_;
  ResourceLimits* limits_;
  LimitsFailed limits_failed_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<Launch>> queue_;  // guarded by mutex_
  size_t waiting_ = 0;                         // tasks in queue_; guarded by mutex_
  uint64_t accepted_ = 0;                      // guarded by mutex_
  std::vector<Drop> drops_;                    // guarded by mutex_
  // Attempts ended by a terminate or SIGKILL, newest last (bounded): never started later.
  std::deque<std::pair<int64_t, int>> ended_attempts_;  // guarded by mutex_
  // The (job, attempt, step)s whose tasks ran and ended here, newest last (bounded). A launch of
  // one again is a late copy (a retried or reconciling launch that came after its tasks ran): it
  // does not clear its nodes of the job that has them now (its tasks are known to the runner,
  // which reports their exits again instead of starting them).
  std::deque<std::tuple<int64_t, int, int>> finished_steps_;     // guarded by mutex_
  bool finished_here(int64_t job, int attempt, int step) const;  // with mutex_ held
  bool stopping_ = false;                                        // guarded by mutex_
  std::thread thread_;
};

}  // namespace trellis
