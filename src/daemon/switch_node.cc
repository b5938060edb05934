#include "daemon/switch_node.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "daemon/agent.h"
#include "daemon/proc_stat.h"

namespace trellis {
namespace {

using Clock = std::chrono::steady_clock;

int64_t micros_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
}

}  // namespace

SwitchNode::SwitchNode(Tasks& runner, Freezer freezer, std::string address)
    : runner_(runner), freezer_(std::move(freezer)), address_(std::move(address)) {}

SwitchNode::~SwitchNode() {
  freezer_.remove_root();
  for (auto& [key, files] : stat_files_)
    for (auto& [pid, fd] : files) ::close(fd);
}

Result<ProcStat> SwitchNode::stat_of(const Key& key, pid_t pid) {
  std::lock_guard lock(stat_mutex_);
  std::map<pid_t, int>& files = stat_files_[key];
  auto it = files.find(pid);
  if (it == files.end()) {
    int fd = open_proc_stat(pid);
    if (fd < 0) return fail(Error::Code::kNotFound, "no process " + std::to_string(pid));
    it = files.emplace(pid, fd).first;
  }
  Result<ProcStat> stat = read_open_proc_stat(it->second);
  if (!stat) {  // gone: its file is of no more use
    ::close(it->second);
    files.erase(it);
  }
  return stat;
}

void SwitchNode::close_stats(const Key& key, const std::vector<pid_t>& keep) {
  std::lock_guard lock(stat_mutex_);
  auto files = stat_files_.find(key);
  if (files == stat_files_.end()) return;
  for (auto it = files->second.begin(); it != files->second.end();) {
    if (std::find(keep.begin(), keep.end(), it->first) != keep.end()) {
      ++it;
      continue;
    }
    ::close(it->second);
    it = files->second.erase(it);
  }
  if (files->second.empty()) stat_files_.erase(files);
}

std::string SwitchNode::group_name(const Key& key) {
  return std::to_string(key.first) + "." + std::to_string(key.second);
}

Result<std::string> SwitchNode::cgroup_for(int64_t job, int attempt) {
  return freezer_.prepare(group_name({job, attempt}));
}

void SwitchNode::thaw_for_launch(int64_t job, int attempt) {
  Key key{job, attempt};
  {
    std::lock_guard lock(mutex_);
    if (!frozen_.contains(key)) return;
  }
  if (freezer_.method() == FreezeMethod::kSignals) return;  // new tasks are stopped as they start
  std::map<Key, std::vector<TaskInfo>> tasks = tasks_of({key});
  std::vector<pid_t> groups;
  for (const TaskInfo& task : tasks[key]) groups.push_back(task.process_group);
  if (Status ok = freezer_.thaw(group_name(key), groups); !ok)
    agent_log("thawing job " + group_name(key) + " for a launch: " + ok.error().message);
}

void SwitchNode::started(int64_t job, int attempt) {
  Key key{job, attempt};
  {
    std::lock_guard lock(mutex_);
    if (!frozen_.contains(key)) return;
  }
  std::vector<pid_t> groups;
  // (The map is kept in a variable: a range-for over a member of a temporary reads it after
  // the temporary is gone.)
  std::map<Key, std::vector<TaskInfo>> tasks = tasks_of({key});
  for (const TaskInfo& task : tasks[key]) groups.push_back(task.process_group);
  if (Status ok = freezer_.freeze(group_name(key), groups); !ok)
    agent_log("freezing job " + group_name(key) + " as it started: " + ok.error().message);
  runner_.set_frozen(job, attempt, true);
}

void SwitchNode::before_signal(int64_t job, int attempt) {
  std::vector<Key> thaw;
  {
    std::lock_guard lock(mutex_);
    for (auto it = frozen_.begin(); it != frozen_.end();) {
      if (it->first == job && (attempt == 0 || it->second == attempt)) {
        thaw.push_back(*it);
        it = frozen_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const Key& key : thaw) {
    std::vector<pid_t> groups;
    // (The map is kept in a variable: a range-for over a member of a temporary reads it after
    // the temporary is gone.)
    std::map<Key, std::vector<TaskInfo>> tasks = tasks_of({key});
    for (const TaskInfo& task : tasks[key]) groups.push_back(task.process_group);
    if (Status ok = freezer_.thaw(group_name(key), groups); !ok)
      agent_log("thawing job " + group_name(key) + " to signal it: " + ok.error().message);
    runner_.set_frozen(key.first, key.second, false);
  }
}

void SwitchNode::ended(const std::vector<TaskKey>& tasks) {
  std::lock_guard no_launch(launch_mutex_);
  std::set<Key> jobs;
  {
    std::lock_guard lock(mutex_);
    // Emulated tasks have no runtime area (no process was told of one).
    const bool processes = runner_.has_processes();
    for (const TaskKey& task : tasks) {
      monitor_.forget(task.name());
      if (processes)
        (void)remove_runtime_area(runtime_area_name(task.job_id, task.attempt, task.node));
      jobs.insert({task.job_id, task.attempt});
    }
  }
  // A job's cgroup goes once none of its tasks is left here (rmdir refuses a busy one).
  std::map<Key, std::vector<TaskInfo>> left = tasks_of(jobs);
  std::lock_guard lock(mutex_);
  for (const Key& key : jobs) {
    if (!left[key].empty()) continue;
    frozen_.erase(key);
    close_stats(key, {});
    if (int escaped = freezer_.remove(group_name(key)); escaped > 0)
      agent_log("job " + group_name(key) + ": " + std::to_string(escaped) +
                " process(es) outlived its tasks here (they left their process groups): killed");
    if (group_gone_) group_gone_(group_name(key));
  }
}

std::map<SwitchNode::Key, std::vector<TaskInfo>> SwitchNode::tasks_of(
    const std::set<Key>& keys) const {
  std::map<Key, std::vector<TaskInfo>> out;
  if (keys.empty()) return out;
  for (TaskInfo& task : runner_.tasks()) {
    Key key{task.key.job_id, task.key.attempt};
    if (task.running && keys.contains(key)) out[key].push_back(std::move(task));
  }
  return out;
}

v1::SwitchReply SwitchNode::switch_here(const v1::GangSwitch& request) {
  v1::SwitchReply reply;
  {
    std::lock_guard one_switch(switch_mutex_);
    std::set<Key> out, in, probe;
    for (const v1::JobAttempt& j : request.freeze()) out.insert({j.job_id(), j.attempt()});
    for (const v1::JobAttempt& j : request.thaw()) in.insert({j.job_id(), j.attempt()});
    for (const v1::JobAttempt& j : request.probe()) probe.insert({j.job_id(), j.attempt()});
    std::set<Key> both = out;
    both.insert(in.begin(), in.end());
    both.insert(probe.begin(), probe.end());
    // The outgoing jobs whose activity the controller wants, and the probed ones.
    std::set<Key> looked_at = out;
    for (const v1::JobAttempt& j : request.skip_activity())
      looked_at.erase({j.job_id(), j.attempt()});
    looked_at.insert(probe.begin(), probe.end());
    std::map<Key, std::vector<TaskInfo>> tasks = tasks_of(both);
    auto process_groups = [&](const Key& key) {
      std::vector<pid_t> groups;
      for (const TaskInfo& task : tasks[key]) groups.push_back(task.process_group);
      return groups;
    };

    // No launch is under way while this node freezes and thaws (see hold_for_launch()).
    std::lock_guard no_launch(launch_mutex_);
    Clock::time_point phase = Clock::now();
    for (const Key& key : out) {
      {
        std::lock_guard lock(mutex_);
        frozen_.insert(key);
      }
      if (Status ok = freezer_.freeze(group_name(key), process_groups(key)); !ok)
        reply.add_errors(address_ + ": " + ok.error().message);
      runner_.set_frozen(key.first, key.second, true);
    }
    reply.set_freeze_us(micros_since(phase));

    phase = Clock::now();
    for (const Key& key : looked_at) {
      if (tasks[key].empty()) continue;  // the job has no task here
      v1::JobActivity* activity = reply.add_activity();
      activity->set_job_id(key.first);
      activity->set_attempt(key.second);
      // The job's processes from its cgroup, when it has one: a scan of all of /proc per task
      // was most of a switch's time on a host with many processes. Each one's /proc/PID/stat is
      // read once, here, and handed to the monitor. A task's leader, when it is a job shell,
      // only waits for its ranks: what the job does is what the ranks (and what they started)
      // do, so those leaders are not read at all. (A task started without a shell is its own
      // leader.)
      std::optional<std::vector<pid_t>> in_cgroup = freezer_.processes(group_name(key));
      std::map<pid_t, std::vector<ProcStat>> by_group;
      if (in_cgroup) {
        close_stats(key, *in_cgroup);  // those of processes that left the cgroup
        for (pid_t pid : *in_cgroup) {
          if (std::any_of(tasks[key].begin(), tasks[key].end(),
                          [&](const TaskInfo& t) { return t.shell && t.process_group == pid; }))
            continue;  // a job shell
          Result<ProcStat> stat = stat_of(key, pid);
          if (!stat) continue;  // gone
          // A process that left its task's process group is counted with the first task.
          bool known = std::any_of(tasks[key].begin(), tasks[key].end(), [&](const TaskInfo& t) {
            return t.process_group == stat->process_group;
          });
          by_group[known ? stat->process_group : tasks[key].front().process_group].push_back(
              std::move(*stat));
        }
      }
      for (const TaskInfo& task : tasks[key]) {
        // (The monitor is thread-safe.)
        std::string area = runner_.has_processes()
                               ? runtime_area_name(task.key.job_id, task.key.attempt, task.key.node)
                               : std::string();
        TaskActivity seen;
        if (in_cgroup) {
          seen = monitor_.sample(task.key.name(), std::move(by_group[task.process_group]), area);
        } else {  // without a job shell, as above
          std::vector<pid_t> pids = processes_in_group(task.process_group);
          if (task.shell) std::erase(pids, task.process_group);
          seen = monitor_.sample(task.key.name(), pids, area);
        }
        activity->set_tasks(activity->tasks() + 1);
        activity->set_processes(activity->processes() + seen.processes);
        activity->set_running(activity->running() + seen.running);
        activity->set_waiting_input(activity->waiting_input() + seen.waiting_input);
        activity->set_waiting_message(activity->waiting_message() + seen.waiting_message);
      }
    }
    reply.set_collect_us(micros_since(phase));

    phase = Clock::now();
    for (const Key& key : in) {
      // A job in both lists is frozen, looked at and thawed: a check-up of a job that keeps
      // running from slot to slot.
      {
        std::lock_guard lock(mutex_);
        frozen_.erase(key);
      }
      if (Status ok = freezer_.thaw(group_name(key), process_groups(key)); !ok)
        reply.add_errors(address_ + ": " + ok.error().message);
      runner_.set_frozen(key.first, key.second, false);
    }
    reply.set_thaw_us(micros_since(phase));
  }
  return reply;
}

}  // namespace trellis
