// TaskRunner starts, tracks and signals the processes of jobs on this host, one task per
// (job, attempt, step, node), and keeps track of them across restarts of the agent. (A task is
// a job shell, trellis-shell, which starts the step's ranks on its node: shell/shell.h.)
//
// The tasks' processes are children of the agent's shepherd (daemon/shepherd.h), a small process
// in a session of its own that outlives the agent. It starts each task's command in a new
// process group, and when it ends kills whatever the command left behind in its group and writes
// the exit status to a file in the state directory. The agent never has to be alive when a job
// ends: a restarted agent reads the status from that file.
//
// State directory layout (the files are the whole state: nothing is rewritten per launch; as
// root, `tasks` is a link to a directory on a tmpfs, /run/trellis or /dev/shm, since a reboot
// ends the tasks anyway and each file's creation costs a disk's file system more):
//   tasks/JOB.ATTEMPT.STEP.NODE.pid   "SHEPHERD_PID JOB_PID", by the shepherd once the job runs;
//                                     a task is known exactly while this file exists
//   tasks/JOB.ATTEMPT.STEP.NODE.exit  "EXIT_CODE SIGNAL USER_USEC SYSTEM_USEC MAX_RSS_KB", by the
//                                     shepherd when the job has ended (core/task_usage.h; an
//                                     earlier shepherd's has the first two only)
//                                     (files named JOB.ATTEMPT.NODE, from before steps, are
//                                     step 0's)
//   acknowledged.log                  recently acknowledged tasks with their exit status, one
//                                     line each, "JOB ATTEMPT NODE EXIT SIGNAL [STEP]" (so a
//                                     late repeated launch stays a no-op and hears the exit
//                                     again); appended to before a task's files are removed,
//                                     compacted now and then
//
// Exit statuses: a command that exits has exit_code = its status and signal = 0; one killed by
// a signal has exit_code = 0 and signal = that signal; a command that cannot be started (not
// found, cannot be executed, its cwd or output file cannot be opened, the user cannot be
// switched to) exits 127 (126 when found but not executable) with the reason in its stderr
// file; a task whose shepherd vanished without its status (killed by hand) ends with 255.
//
// Thread-safe. A monitor thread notices exits and enforces the SIGKILL after a terminate's
// grace period. This runner's shepherd announces exits on a pipe, so an exit is seen at once;
// tasks adopted from an earlier agent (and its shepherd) are polled every poll interval.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <compare>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "core/task_usage.h"
#include "daemon/resource_limits.h"
#include "daemon/shepherd_client.h"

namespace trellis {

// One task: a job step's process on one node (its job shell).
struct TaskKey {
  int64_t job_id = 0;
  int attempt = 0;
  std::string node;
  int step = 0;  // 0: the job's command
  auto operator<=>(const TaskKey&) const = default;
  // "JOB.ATTEMPT.STEP.NODE", for file names and messages.
  std::string name() const;
};
// The key of a name() (or of the older "JOB.ATTEMPT.NODE", step 0); nullopt when malformed.
std::optional<TaskKey> parse_task_name(const std::string& name);

// What to run for one task. The agent fills in the whole environment.
struct TaskSpec {
  TaskKey key;
  std::vector<std::string> argv;  // non-empty; argv[0] is looked up in PATH
  // The file the agent found for argv[0] already (daemon/program_libraries.h), tried first; ""
  // = none: exec looks argv[0] up in the job's PATH.
  std::string program;
  // The task's process is a job shell (shell/shell.h), which only waits for the ranks it starts;
  // else it is the job's own process (a batch step, a one-task step started directly).
  bool shell = false;
  std::string cwd;               // absolute; "" = the user's home directory (else /)
  std::string output;            // stdout file; relative = to cwd; "" = trellis-%j.out
  std::string error;             // stderr file; "" = the output file. "%j" = the job id.
  std::vector<std::string> env;  // "NAME=value", the complete environment
  int uid = -1;                  // run as this user; -1 = the agent's own
  int gid = -1;
  // The cgroup.procs file of the freezer cgroup its processes join ("" = none; see
  // daemon/freezer.h).
  std::string cgroup_procs;
  // What its job attempt's cgroups hold it to on this node (daemon/node_share.h), applied by the
  // launcher when the agent enforces limits; and the files of those cgroups its process joins
  // (daemon/resource_limits.h), filled in then. Both empty: no limits.
  std::optional<NodeLimits> limits;
  std::vector<std::string> limit_procs;
  // On a shared node: the CPUs its job was given there (host ids), kept with the task (also
  // across an agent restart) so that a later launch on those CPUs can tell a leftover from a
  // neighbour. Empty: the node whole, or not known.
  std::vector<int> shared_cpus;
};

// What the runner knows about a task.
struct TaskInfo {
  TaskKey key;
  bool running = false;
  int exit_code = 0;  // when !running
  int signal = 0;
  pid_t process_group = 0;
  bool shell = false;  // the group's leader is a job shell (TaskSpec::shell)
  // Of a task this runner started (not one adopted from an earlier agent): its stderr file
  // (absolute), its user, and whether cgroup limits held it (TaskSpec::limits).
  std::string error_file;
  int uid = -1;
  bool limited = false;
  std::vector<int> cpus;  // TaskSpec::shared_cpus (read back for an adopted task)
  // What its processes used (core/task_usage.h), once ended; nullopt when not known (a task
  // never started, lost, or heard of again after its acknowledgement).
  std::optional<TaskUsage> usage;
};

// What an agent's launcher, gang switches and exit reports use of the tasks it runs. TaskRunner
// (below) runs them as processes; EmulatedTasks (daemon/emulated_tasks.h) only pretends to, for
// scale tests. Every method is thread-safe.
class Tasks {
 public:
  virtual ~Tasks() = default;
  // Starts a task: true when started, false when this (job, attempt, node) is known already or
  // was acknowledged recently (a repeated launch never runs a task twice).
  virtual Result<bool> launch(const TaskSpec& spec) = 0;
  // launch() of each, in order, with each one's result; a runner may overlap their starts.
  virtual std::vector<Result<bool>> launch_all(const std::vector<TaskSpec>& specs) {
    std::vector<Result<bool>> results;
    for (const TaskSpec& spec : specs) results.push_back(launch(spec));
    return results;
  }
  // A task that was never started ends with this status, reported like any exit; false when the
  // task is known already.
  virtual bool record_ended(const TaskKey& key, int exit_code, int signal) = 0;
  // Sends `signal` to the running tasks of `job_id` (`attempt` 0 = any; `step` nullopt = every
  // step); 0 terminates (SIGTERM, SIGKILL after `grace`). Returns how many tasks were signalled.
  virtual int signal(int64_t job_id, int attempt, int signal, std::chrono::milliseconds grace,
                     std::optional<int> step = std::nullopt) = 0;
  // Every task known: running ones and ended ones not yet acknowledged.
  virtual std::vector<TaskInfo> tasks() const = 0;
  // The ended tasks not yet acknowledged.
  virtual std::vector<TaskInfo> unacknowledged_exits() const = 0;
  // Forgets ended tasks once a controller has recorded their exits.
  virtual void acknowledge(const std::vector<TaskKey>& keys) = 0;
  // A gang switch froze (true) or thawed the job's tasks here. Processes are frozen by the
  // agent's Freezer (daemon/freezer.h), so TaskRunner ignores this; emulated tasks stop their
  // clocks.
  virtual void set_frozen(int64_t /*job_id*/, int /*attempt*/, bool /*frozen*/) {}
  // Whether the tasks are processes (false for emulated ones): only processes have runtime
  // areas, cgroups and activity to look at or clean up.
  virtual bool has_processes() const { return true; }
};

class TaskRunner : public Tasks {
 public:
  struct Options {
    std::string state_dir;  // created if absent
    // How often adopted tasks' status files are looked at (the delay before their exit is seen),
    // and how often grace periods are checked.
    std::chrono::milliseconds poll_interval{20};
    // The trellis-shepherd program; "" = the one next to the running executable.
    std::string shepherd_binary;
    // Called (from the monitor thread, without locks held) after a task has ended.
    std::function<void()> on_exit;
    // How many acknowledged tasks are remembered (with their exit), so that a launch repeated
    // after its exit was acknowledged stays a no-op: a few per node served.
    size_t remembered_acknowledged = 1024;
  };

  // Opens the state directory and re-adopts the tasks recorded there: running ones are tracked
  // again, ended ones keep their status until acknowledged.
  static Result<std::unique_ptr<TaskRunner>> open(Options options);

  // Stops watching; the tasks keep running (a restarted agent adopts them).
  ~TaskRunner() override;
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;

  // Starts a task. True when started; false when this (job, attempt, node) is already known or
  // was acknowledged recently: a repeated launch never runs a task twice (an acknowledged one is
  // listed again by unacknowledged_exits(), so whoever launched it again learns how it ended).
  // Older attempts of the same job on the same node still running are killed (SIGKILL) first.
  Result<bool> launch(const TaskSpec& spec) override;
  // Several launches, each as launch() would do it, with the shepherd starting one task while
  // the next one's plan is written (daemon/shepherd_client.h).
  std::vector<Result<bool>> launch_all(const std::vector<TaskSpec>& specs) override;

  // A task that was never started ends with this status (a launch dropped before it started, or
  // one that could not start): it is reported like any exit. False when the task is known already
  // (or was acknowledged).
  bool record_ended(const TaskKey& key, int exit_code, int signal) override;

  // Sends `signal` to the process groups of the running tasks of `job_id` (`attempt` 0 = any
  // attempt; `step` nullopt = every step). Signal 0 terminates: SIGTERM now, then SIGKILL after
  // `grace` to whatever is left. Returns how many tasks were signalled.
  int signal(int64_t job_id, int attempt, int signal, std::chrono::milliseconds grace,
             std::optional<int> step = std::nullopt) override;

  // Every task known: running ones and ended ones not yet acknowledged.
  std::vector<TaskInfo> tasks() const override;
  // The ended tasks not yet acknowledged.
  std::vector<TaskInfo> unacknowledged_exits() const override;
  // Forgets ended tasks once a controller has recorded their exits (running ones are kept).
  void acknowledge(const std::vector<TaskKey>& keys) override;

 private:
  struct Task {
    TaskKey key;
    pid_t shepherd = 0;
    long long shepherd_start = -1;  // its /proc start time, to tell it from a reused pid
    pid_t process_group = 0;
    bool shell = false;           // its leader is a job shell
    bool announces_exit = false;  // started by this runner: the shepherd writes the notice pipe
    bool running = true;
    int exit_code = 0;
    int signal = 0;
    std::string error_file;  // TaskInfo's
    int uid = -1;
    bool limited = false;
    std::vector<int> cpus;
    std::optional<TaskUsage> usage;
    std::chrono::steady_clock::time_point kill_at{};  // SIGKILL due (terminate), if set
  };

  explicit TaskRunner(Options options);
  // What the shepherd is to start for `spec`; nullopt when it is known already or superseded
  // (see launch()). Callers hold launch_mutex_.
  Result<std::optional<ShepherdPlan>> plan_of(const TaskSpec& spec);
  void record_started(const TaskSpec& spec, const ShepherdPlan& plan,
                      const ShepherdClient::Started& started);
  Status load();
  std::string acknowledged_log() const;
  bool check(Task& task);  // updates a running task; true when it has just ended
  void monitor();
  std::vector<TaskKey> wait_for_notices(std::chrono::milliseconds timeout);
  bool wait_ended(const TaskKey& key, std::chrono::milliseconds timeout);

  std::string tasks_dir() const;
  std::string pid_file(const TaskKey& key) const;
  std::string cpus_file(const TaskKey& key) const;  // TaskSpec::shared_cpus, as id ranges
  std::string exit_file(const TaskKey& key) const;

  Options options_;
  int notice_read_ = -1, notice_write_ = -1;  // the exit-notice pipe (shepherds write)
  std::unique_ptr<ShepherdClient> shepherd_;
  std::pair<pid_t, long long> shepherd_start_{0, -1};  // (pid, start time); launch_mutex_
  std::string notice_buffer_;  // a partial line read from the pipe; monitor thread only
  std::mutex launch_mutex_;    // one launch at a time, so a key is checked and started atomically
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<TaskKey, Task> tasks_;  // guarded by mutex_
  // Ended tasks a controller has recorded, newest last, bounded; with their exit status, so that
  // a repeated launch (a restarted controller reconciling) hears the exit again instead of
  // running the task a second time. Guarded by mutex_.
  struct Acknowledged {
    TaskKey key;
    int exit_code = 0;
    int signal = 0;
  };
  std::deque<Acknowledged> acknowledged_;
  size_t acknowledged_log_lines_ = 0;  // lines in acknowledged.log; guarded by mutex_
  // Exit notices of tasks not recorded yet (their start's answer still on its way), newest
  // last, bounded; guarded by mutex_.
  static constexpr size_t kEarlyNoticesKept = 4096;
  std::deque<TaskKey> early_notices_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread monitor_;
};

}  // namespace trellis
