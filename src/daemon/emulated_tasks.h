// EmulatedTasks: tasks that are not run but pretended, for scale tests (`trellis-agent --emulate`,
// `trellis cluster up --emulate`; issue 33, as Flux's test execution and Slurm's multiple-slurmd
// do). One agent process can then serve thousands of nodes, and one host carry a machine of
// 100,000+ nodes, while the control tree, the controller and the store stay the real ones: the
// agent accepts, starts, reports and acknowledges these tasks exactly as it does processes (the
// same launcher, the same exit reports and their batching); only the fork is missing.
//
// How long an emulated task "runs" and how it ends, from its command alone:
//   sleep N      N seconds (a decimal number, as sleep(1) takes it; a suffix s, m, h or d
//                multiplies as sleep's does), then exit 0;
//   false        ends at once with exit 1;
//   anything else  ends at once with exit 0 (so `true`, `hostname`).
// A batch script counts as its one command when it has one (comments, #SBATCH lines and blank
// lines aside): `sbatch --wrap 'sleep 60'` lasts 60 s; a script of several commands ends at once.
// (Not the time limit: a job's limit is its upper bound, and a scale test wants jobs that end
// well before it. `sleep N` says how long, as in a real cluster's test.)
//
// Signals act as they would on a process that does not handle them: SIGSTOP, SIGTSTP, SIGTTIN and
// SIGTTOU stop its clock and SIGCONT restarts it; SIGCHLD, SIGURG and SIGWINCH do nothing; any
// other signal ends it as killed by that signal; a terminate (signal 0) ends it as killed by
// SIGTERM at once. A gang switch that freezes the task's job stops its clock until the job is
// thawed (set_frozen). A launch of a later attempt ends a running earlier one of the same job on
// the same node as killed by SIGKILL, as TaskRunner does.
//
// Nothing is kept on disk: an emulated agent that restarts has forgotten its tasks (the
// controller's registration relaunches a running job whose tasks the agent lost). Tasks have no
// process group (TaskInfo::process_group is 0), so freezers and activity samples find nothing,
// and has_processes() is false: the agent gives them no environment (TaskSpec::env is empty; only
// argv is read) and no runtime area, so that one costs a record here and nothing else.
//
// Thread-safe. One timer thread ends the tasks whose time is up and calls on_exit once per
// round, as TaskRunner's monitor does.
//
//   EmulatedTasks tasks({.on_exit = [&] { wake_reporter(); }});
//   tasks.launch(spec);                 // spec.argv = {"sleep", "5"}: ends in 5 s, exit 0
//   tasks.signal(job, 0, SIGSTOP, {});  // its clock stops
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/task_runner.h"

namespace trellis {

class EmulatedTasks : public Tasks {
 public:
  struct Options {
    // Called (from the timer thread, or from the caller of record_ended or signal, without locks
    // held) after tasks have ended.
    std::function<void()> on_exit;
    // How many acknowledged tasks are remembered, so that a repeated launch stays a no-op.
    size_t remembered_acknowledged = 1024;
  };

  explicit EmulatedTasks(Options options);
  ~EmulatedTasks() override;
  EmulatedTasks(const EmulatedTasks&) = delete;
  EmulatedTasks& operator=(const EmulatedTasks&) = delete;

  Result<bool> launch(const TaskSpec& spec) override;
  bool record_ended(const TaskKey& key, int exit_code, int signal) override;
  int signal(int64_t job_id, int attempt, int signal, std::chrono::milliseconds grace,
             std::optional<int> step = std::nullopt) override;
  std::vector<TaskInfo> tasks() const override;
  std::vector<TaskInfo> unacknowledged_exits() const override;
  void acknowledge(const std::vector<TaskKey>& keys) override;
  void set_frozen(int64_t job_id, int attempt, bool frozen) override;
  bool has_processes() const override { return false; }

  // The command an emulated batch script stands for: the words of its one command line
  // ({"sleep", "60"}), or {"sh"} when it has several or none.
  static std::vector<std::string> command_of_script(std::string_view script);

 private:
  using Clock = std::chrono::steady_clock;
  // What a command does when emulated (see the header comment).
  struct Behaviour {
    Clock::duration runs{};
    int exit_code = 0;
  };
  struct Task {
    bool running = true;
    int exit_code = 0;  // when !running
    int signal = 0;
    Behaviour behaviour;
    // While its clock runs: when it ends. While stopped (a signal, a frozen job): how long it
    // has left.
    Clock::time_point ends_at{};
    Clock::duration left{};
    bool stopped = false;  // by SIGSTOP and its kind
    bool frozen = false;   // by a gang switch
  };
  struct Acknowledged {
    int exit_code = 0;
    int signal = 0;
  };
  using JobNode = std::pair<int64_t, std::string>;

  // What `argv` does when emulated (see the header comment).
  static Behaviour behaviour_of(const std::vector<std::string>& argv);
  // With mutex_ held: ends the task as killed by `signal` (or exited with `exit_code`).
  void end(Task& task, int exit_code, int signal);
  // With mutex_ held: stops or restarts the task's clock after `stopped`/`frozen` changed.
  void update_clock(Task& task, bool was_paused);
  // With mutex_ held: `key` is in tasks_ or acknowledged_ (remember), or may have left both
  // (forget_if_gone), for the index of attempts.
  void remember(const TaskKey& key);
  void forget_if_gone(const TaskKey& key);
  void run();

  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  // All guarded by mutex_. Every lookup a launch makes is logarithmic: an agent emulating 4,096
  // nodes starts a full-machine job's 4,096 tasks in one go.
  std::map<TaskKey, Task> tasks_;
  std::map<TaskKey, Acknowledged> acknowledged_;   // recently acknowledged, with their exits
  std::deque<TaskKey> acknowledged_order_;         // of acknowledged_, newest last (the bound)
  std::map<JobNode, std::set<int>> attempts_;      // attempts in tasks_ or acknowledged_
  std::multimap<Clock::time_point, TaskKey> due_;  // running clocks, by end; guarded by mutex_
  bool stopping_ = false;                          // guarded by mutex_
  std::thread timer_;
};

}  // namespace trellis
