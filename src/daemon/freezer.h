// Freezer: stops every process of a job on this agent at once and starts them again, for gang
// switching (seed 002: a switch stops all processes of the outgoing job before the incoming one
// runs). What it freezes is a group: one job attempt's tasks on this agent ("JOB.ATTEMPT").
//
// Three ways, the first that works on this host:
//   kCgroupV2   each group has a cgroup under the agent's own in the unified hierarchy; freezing
//               writes cgroup.freeze and waits until cgroup.events says "frozen 1" (woken by the
//               file's change notice, or by a timeout that grows: the kernel delays a notice
//               that comes within 10 ms of the file's previous one).
//   kCgroupV1   the same with the v1 freezer controller (freezer.state FROZEN).
//   kSignals    no cgroup can be made (a container without a writable cgroupfs): SIGSTOP to each
//               task's process group, then every thread of every process in the groups is
//               watched in /proc until it is stopped; SIGCONT thaws. A process that leaves its
//               group (setsid) escapes this way, which is why cgroups come first.
// A task's processes join the cgroup before exec (the shepherd writes cgroup.procs, see
// ShepherdPlan::cgroup_procs), so every child they fork is in it too; a process that joins a
// frozen cgroup is frozen at once, so a task launched after its job was frozen never runs. (With
// signals the agent stops such a task right after it starts.)
//
// freeze() returns only once every process is seen frozen (the "confirmed" of the issue): the
// agent acknowledges a switch after that, so a frozen job is never running when the controller
// hears the switch is done.
//
// A group's control files (cgroup.freeze or freezer.state, cgroup.events, cgroup.procs) are opened
// once, when prepare() makes its cgroup, and kept open until remove(): a gang switch then costs
// an agent a write to freeze, reads to confirm and to list, and a write to thaw, with no path
// look-up in the cgroup file system (those were a tenth of a 64-agent switch's CPU time).
//
//   Freezer freezer = Freezer::open({.name = "agent-6817"});
//   Result<std::string> procs = freezer.prepare("12.1");   // -> ShepherdPlan::cgroup_procs
//   freezer.freeze("12.1", {process_group_n3, process_group_n4});
//   freezer.thaw("12.1", {process_group_n3, process_group_n4});
//   freezer.remove("12.1");              // once its tasks have ended: kills what escaped them
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

enum class FreezeMethod { kCgroupV2, kCgroupV1, kSignals };
std::string_view freeze_method_name(FreezeMethod method);  // "cgroup-v2", "cgroup-v1", "signals"

class Freezer {
 public:
  struct Options {
    // Names this agent's cgroup (trellis-NAME, under the agent's own cgroup); agents on one host
    // need different names. Tasks' cgroups go inside it.
    std::string name = "agent";
    // Use signals even where cgroups work (tests of that path; hosts whose cgroups are managed
    // by something else).
    bool force_signals = false;
    // How long freeze() waits to see every process stopped before it gives up.
    std::chrono::milliseconds confirm_timeout{2000};
  };

  // Finds how to freeze on this host (never fails: signals always work).
  static Freezer open(Options options);

  FreezeMethod method() const { return method_; }
  // The agent's cgroup directory ("" with signals).
  const std::string& root() const { return root_; }

  // Makes the group's cgroup and returns the file its processes write to join it; "" with
  // signals. Idempotent: a group frozen before its tasks were launched stays frozen.
  Result<std::string> prepare(std::string_view group);
  // Stops every process of the group (its cgroup; with signals, the process groups given) and
  // returns once all are seen stopped; kUnavailable naming the group if that takes longer
  // than confirm_timeout. With cgroups a group with no processes yet is frozen ahead of them.
  Status freeze(std::string_view group, const std::vector<pid_t>& process_groups);
  // Lets the group's processes run again.
  Status thaw(std::string_view group, const std::vector<pid_t>& process_groups);
  // The processes in the group's cgroup (cgroup.procs): every process of its tasks, also those
  // that left their process group; nullopt with signals (the caller scans /proc for the process
  // groups) or when the cgroup does not exist.
  std::optional<std::vector<pid_t>> processes(std::string_view group) const;
  // Removes the groups' cgroups that have no process left, and the agent's own cgroup if that
  // leaves it empty (when the agent stops; jobs that keep running keep theirs).
  void remove_root();
  // The same for an agent's cgroup directory named by path, once that agent is gone (`trellis
  // cluster down` after it killed the leftovers): true when the directory is gone. Refuses (false)
  // a path that is not a cgroup this code makes (a "trellis-" directory under /sys/fs/cgroup).
  static bool remove_agent_cgroup(const std::string& root);
  // Removes the group's cgroup once every task of it has ended (thawed first, so that nothing
  // that might still join it is frozen). What is still in the cgroup then left its task's process
  // group (setsid, a daemonising rank) and is killed first; returns how many such processes there
  // were. With signals nothing can be found this way: 0.
  int remove(std::string_view group);

 private:
  Freezer(FreezeMethod method, std::string root, Options options)
      : method_(method), root_(std::move(root)), options_(std::move(options)) {}
  // A group's control files, open (-1: could not be opened; the path is opened at each use).
  // Closed when the last user lets go (remove() may drop it while a thaw still writes to it).
  struct Files {
    int state = -1;   // cgroup.freeze (v2) or freezer.state (v1)
    int events = -1;  // cgroup.events (v2)
    int procs = -1;   // cgroup.procs
    Files() = default;
    Files(const Files&) = delete;
    Files& operator=(const Files&) = delete;
    ~Files();
  };
  // The groups' cgroups made so far (prepare() makes each once), by directory.
  struct Made {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<Files>> dirs;
  };
  std::string group_dir(std::string_view group) const;
  // The group's open files when prepare() made its cgroup; null otherwise.
  std::shared_ptr<Files> files_of(const std::string& dir) const;
  Status freeze_by_signals(std::string_view group, const std::vector<pid_t>& process_groups);

  FreezeMethod method_;
  std::string root_;
  Options options_;
  std::shared_ptr<Made> made_ = std::make_shared<Made>();
};

// Whether every thread of every process in `process_group` is stopped (or a zombie); true when
// the group has no process left.
bool process_group_stopped(pid_t process_group);

}  // namespace trellis
