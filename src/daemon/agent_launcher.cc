#include "daemon/agent_launcher.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <thread>

#include "daemon/agent.h"

namespace trellis {
namespace {

// Tasks started with the launch held at a time: a gang switch waits for at most these.
constexpr int kTasksPerHold = 16;
// Attempts remembered as ended (a late launch of one of them starts nothing).
constexpr size_t kEndedAttemptsKept = 4096;
// How long a launch on whole nodes waits for the leftovers it killed to be gone (an adopted task's
// exit is seen at the runner's next poll).
constexpr auto kLeftoverWait = std::chrono::seconds(15);

}  // namespace

AgentLauncher::AgentLauncher(Tasks& runner, SwitchNode& switches, ResourceLimits* limits)
    : runner_(runner), switches_(switches), limits_(limits) {
  thread_ = std::thread([this] { run(); });
}

AgentLauncher::~AgentLauncher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Whoever waits for a launch left undone hears so.
  for (std::unique_ptr<Launch>& launch : queue_) {
    if (launch->ended.empty()) {
      launch->outcome.error = "the agent stopped before starting every task";
      launch->promise.set_value(launch->outcome);
    }
  }
}

std::shared_future<AgentLauncher::Outcome> AgentLauncher::accept(int64_t job, int attempt,
                                                                 std::vector<TaskSpec> tasks,
                                                                 Nodes nodes) {
  auto launch = std::make_unique<Launch>();
  launch->job = job;
  launch->attempt = attempt;
  launch->use = nodes;
  launch->outcome.tasks = static_cast<int>(tasks.size());
  for (TaskSpec& spec : tasks) {
    if (nodes != Nodes::kShared) launch->nodes.insert(spec.key.node);
    launch->tasks.push_back(std::move(spec));
  }
  std::shared_future<Outcome> done = launch->promise.get_future().share();
  {
    std::lock_guard lock(mutex_);
    launch->seq = ++accepted_;
    waiting_ += launch->tasks.size();
    queue_.push_back(std::move(launch));
  }
  wake_.notify_all();
  return done;
}

int AgentLauncher::drop(int64_t job, int attempt, int signal, bool attempt_over) {
  std::vector<TaskKey> dropped;
  {
    std::lock_guard lock(mutex_);
    drops_.push_back({accepted_, job, attempt, signal});
    if (attempt_over && attempt != 0) {
      ended_attempts_.emplace_back(job, attempt);
      if (ended_attempts_.size() > kEndedAttemptsKept) ended_attempts_.pop_front();
    }
    for (std::unique_ptr<Launch>& launch : queue_) {
      if (launch->job != job || (attempt != 0 && launch->attempt != attempt)) continue;
      for (const TaskSpec& spec : launch->tasks) dropped.push_back(spec.key);
      waiting_ -= launch->tasks.size();
      launch->tasks.clear();  // the thread completes it when it comes to it
    }
  }
  for (const TaskKey& key : dropped) (void)runner_.record_ended(key, 0, signal);
  if (!dropped.empty())
    agent_log("job " + std::to_string(job) + ": " + std::to_string(dropped.size()) +
              " tasks not started yet will not be (signal " + std::to_string(signal) + ")");
  return static_cast<int>(dropped.size());
}

void AgentLauncher::ended(std::vector<TaskKey> keys) {
  auto cleanup = std::make_unique<Launch>();
  {
    std::lock_guard lock(mutex_);
    for (const TaskKey& key : keys) {
      std::tuple<int64_t, int, int> step{key.job_id, key.attempt, key.step};
      if (std::find(finished_steps_.rbegin(), finished_steps_.rend(), step) !=
          finished_steps_.rend())
        continue;
      finished_steps_.push_back(step);
      if (finished_steps_.size() > kEndedAttemptsKept) finished_steps_.pop_front();
    }
    cleanup->ended = std::move(keys);
    queue_.push_back(std::move(cleanup));
  }
  wake_.notify_all();
}

size_t AgentLauncher::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_;
}

int AgentLauncher::dropped(const Launch& launch) const {
  for (const Drop& d : drops_)
    if (d.job == launch.job && (d.attempt == 0 || d.attempt == launch.attempt) &&
        launch.seq <= d.seq)
      return d.signal;
  const std::pair<int64_t, int> key{launch.job, launch.attempt};
  if (std::find(ended_attempts_.rbegin(), ended_attempts_.rend(), key) != ended_attempts_.rend())
    return SIGKILL;
  return 0;
}

bool AgentLauncher::finished_here(int64_t job, int attempt, int step) const {
  const std::tuple<int64_t, int, int> key{job, attempt, step};
  return std::find(finished_steps_.rbegin(), finished_steps_.rend(), key) != finished_steps_.rend();
}

std::set<std::pair<int64_t, int>> AgentLauncher::others_on_nodes(const Launch& launch) const {
  // kSharedCores: the CPUs the launch's tasks are given, per node.
  std::map<std::string, std::set<int>> cpus_of;
  if (launch.use == Nodes::kSharedCores)
    for (const TaskSpec& spec : launch.tasks)
      cpus_of[spec.key.node].insert(spec.shared_cpus.begin(), spec.shared_cpus.end());
  auto on_its_cpus = [&](const TaskInfo& task) {
    if (launch.use != Nodes::kSharedCores) return true;
    auto mine = cpus_of.find(task.key.node);
    if (mine == cpus_of.end()) return false;
    return std::any_of(task.cpus.begin(), task.cpus.end(),
                       [&](int cpu) { return mine->second.count(cpu) > 0; });
  };
  std::set<std::pair<int64_t, int>> found;
  for (const TaskInfo& task : runner_.tasks())
    if (task.running && launch.nodes.contains(task.key.node) &&
        (task.key.job_id != launch.job || task.key.attempt != launch.attempt) && on_its_cpus(task))
      found.emplace(task.key.job_id, task.key.attempt);
  return found;
}

bool AgentLauncher::clear_nodes(const Launch& launch) {
  std::set<std::pair<int64_t, int>> found = others_on_nodes(launch);
  if (found.empty()) return true;
  for (const auto& [job, attempt] : found) {
    agent_log("job " + std::to_string(job) + " attempt " + std::to_string(attempt) +
              " still runs on nodes that job " + std::to_string(launch.job) + " attempt " +
              std::to_string(launch.attempt) +
              (launch.use == Nodes::kSharedCores
                   ? " is launched on, on CPUs given to it now (so its attempt is over and its "
                     "kill was lost): killed"
                   : " is launched on (nodes are whole, so its attempt is over and its kill was "
                     "lost): killed"));
    switches_.before_signal(job, attempt);
    (void)runner_.signal(job, attempt, SIGKILL, std::chrono::milliseconds(0));
  }
  const auto deadline = std::chrono::steady_clock::now() + kLeftoverWait;
  while (!(found = others_on_nodes(launch)).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return found.empty();
}

void AgentLauncher::claim_nodes(Launch& launch) {
  launch.cleared = true;
  // A late copy of a launch that was dropped, or whose tasks already ran, leaves the nodes to
  // whoever has them now.
  {
    std::lock_guard held(mutex_);
    if (dropped(launch) != 0 ||
        (!launch.tasks.empty() &&
         finished_here(launch.job, launch.attempt, launch.tasks.front().key.step)))
      return;
  }
  if (launch.use == Nodes::kWhole || launch.use == Nodes::kSharedCores) {
    if (!clear_nodes(launch))
      fail_waiting(launch, "a task of another job on its nodes outlived SIGKILL");
    return;
  }
  // kWholeIfFree: whoever runs there was given the nodes after this attempt (see the header).
  std::set<std::pair<int64_t, int>> found = others_on_nodes(launch);
  if (found.empty()) return;
  std::string holders;
  for (const auto& [job, attempt] : found)
    holders += (holders.empty() ? "job " : ", job ") + std::to_string(job) + " attempt " +
               std::to_string(attempt);
  fail_waiting(launch, "sent again to reconcile, it found " + holders +
                           " running on its nodes: its own attempt is over and the nodes went "
                           "on, so it starts nothing and kills nothing");
}

void AgentLauncher::fail_waiting(Launch& launch, const std::string& why) {
  std::deque<TaskSpec> failed;
  {
    std::lock_guard lock(mutex_);
    failed.swap(launch.tasks);
    waiting_ -= failed.size();
  }
  agent_log("launch of job " + std::to_string(launch.job) + " attempt " +
            std::to_string(launch.attempt) + ": " + std::to_string(failed.size()) +
            " tasks not started: " + why);
  if (launch.outcome.error.empty()) launch.outcome.error = why;
  for (const TaskSpec& spec : failed) (void)runner_.record_ended(spec.key, 255, 0);
}

void AgentLauncher::start_some(const std::vector<Launch*>& launches) {
  // The jobs' cgroups are not removed, and no switch freezes or thaws them, while their tasks
  // join them. Held before the batch leaves the waiting tasks, so that whoever holds the launch
  // sees each task either waiting or started (Agent::reap_steps).
  std::unique_lock<std::mutex> held = switches_.hold_for_launch();
  struct Part {
    Launch* launch;
    size_t from = 0, count = 0;  // its tasks in `batch`
  };
  std::vector<Part> parts;
  std::vector<TaskSpec> batch;
  {
    std::lock_guard lock(mutex_);
    for (Launch* launch : launches) {
      Part part{launch, batch.size(), 0};
      while (!launch->tasks.empty() && static_cast<int>(batch.size()) < kTasksPerHold) {
        batch.push_back(std::move(launch->tasks.front()));
        launch->tasks.pop_front();
        ++part.count;
      }
      waiting_ -= part.count;
      if (part.count > 0) parts.push_back(part);
    }
  }
  // Per launch: the drops that came while the batch was taken apply to it too; the tasks join
  // the job attempt's cgroup.
  std::vector<TaskSpec> starting;
  std::vector<std::optional<std::string>> refused(batch.size());  // why a task cannot start
  std::vector<int> late(parts.size(), 0);  // tasks of an attempt that was over before they started
  for (size_t k = 0; k < parts.size(); ++k) {
    Launch& launch = *parts[k].launch;
    switches_.thaw_for_launch(launch.job, launch.attempt);
    int signal = 0;
    {
      std::lock_guard lock(mutex_);
      signal = dropped(launch);
    }
    Result<std::string> cgroup = signal != 0 ? Result<std::string>(std::string())
                                             : switches_.cgroup_for(launch.job, launch.attempt);
    for (size_t i = parts[k].from; i < parts[k].from + parts[k].count; ++i) {
      if (signal != 0) {
        (void)runner_.record_ended(batch[i].key, 0, signal);
        ++late[k];
      } else if (!cgroup) {
        refused[i] = cgroup.error().message;
      } else {
        batch[i].cgroup_procs = *cgroup;
        if (Status held = hold_to_limits(launch, batch[i]); !held) {
          refused[i] = held.error().message;
          if (limits_failed_) limits_failed_(batch[i].key, *refused[i]);
        }
      }
    }
  }
  std::vector<size_t> started_index;  // the batch's place of each task in `starting`
  for (size_t k = 0; k < parts.size(); ++k)
    for (size_t i = parts[k].from; i < parts[k].from + parts[k].count; ++i)
      if (late[k] == 0 && !refused[i]) {
        started_index.push_back(i);
        starting.push_back(batch[i]);
      }
  std::vector<Result<bool>> started = runner_.launch_all(starting);
  for (size_t j = 0; j < started_index.size(); ++j)
    if (!started[j]) refused[started_index[j]] = started[j].error().message;
  size_t next = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    Launch& launch = *parts[k].launch;
    for (size_t i = parts[k].from; i < parts[k].from + parts[k].count; ++i) {
      if (refused[i]) {
        // It cannot start: it ends at once (exit 255), so that its job hears of it.
        agent_log("launch of " + batch[i].key.name() + " failed: " + *refused[i]);
        if (launch.outcome.error.empty()) launch.outcome.error = *refused[i];
        (void)runner_.record_ended(batch[i].key, 255, 0);
      }
      if (next < started_index.size() && started_index[next] == i) {
        if (started[next] && *started[next]) ++launch.outcome.started;
        ++next;
      }
    }
    if (late[k] > 0)
      agent_log("launch of job " + std::to_string(launch.job) + " attempt " +
                std::to_string(launch.attempt) + ": " + std::to_string(late[k]) +
                " tasks not started, the attempt was signalled to end first");
    // A frozen job is frozen again, new tasks included.
    switches_.started(launch.job, launch.attempt);
  }
}

Status AgentLauncher::hold_to_limits(const Launch& launch, TaskSpec& task) {
  if (!task.limits || limits_ == nullptr) return Ok{};
  // The attempt's group, made (or found, idempotently) with every value read back.
  const std::string group = std::to_string(launch.job) + "." + std::to_string(launch.attempt);
  Result<std::vector<std::string>> procs = limits_->apply(group, *task.limits);
  if (!procs)
    return fail(Error::Code::kUnavailable,
                "its limits did not take (" + procs.error().message + ")");
  task.limit_procs = std::move(*procs);
  return Ok{};
}

void AgentLauncher::complete(Launch& done) {
  // A drop is kept while a launch it applies to waits.
  std::erase_if(drops_, [&](const Drop& d) {
    return std::none_of(queue_.begin(), queue_.end(), [&](const std::unique_ptr<Launch>& l) {
      return l->ended.empty() && l->job == d.job && (d.attempt == 0 || d.attempt == l->attempt) &&
             l->seq <= d.seq;
    });
  });
  if (!done.ended.empty()) return;
  if (done.outcome.tasks > 0)
    agent_log("launch job " + std::to_string(done.job) + " attempt " +
              std::to_string(done.attempt) + ": " + std::to_string(done.outcome.started) + " of " +
              std::to_string(done.outcome.tasks) + " tasks started" +
              (done.outcome.started < done.outcome.tasks
                   ? " (the others were known already, dropped or failed)"
                   : ""));
  done.promise.set_value(done.outcome);
}

void AgentLauncher::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    // The launches at the front start together, up to kTasksPerHold tasks: the runner overlaps
    // their starts (a stream of one-task jobs is one launch each). A cleanup is done alone, in
    // its place.
    // A launch whose nodes another of the batch has too waits for the next batch: its claim
    // of the nodes must see the tasks of the one before it (AgentLauncher's header).
    std::vector<Launch*> front;
    std::set<std::string> nodes;
    size_t tasks = 0;
    for (const std::unique_ptr<Launch>& launch : queue_) {
      if (!launch->ended.empty() || tasks >= static_cast<size_t>(kTasksPerHold)) break;
      if (!front.empty() && std::any_of(launch->nodes.begin(), launch->nodes.end(),
                                        [&](const std::string& n) { return nodes.contains(n); }))
        break;
      front.push_back(launch.get());
      nodes.insert(launch->nodes.begin(), launch->nodes.end());
      tasks += launch->tasks.size();
    }
    lock.unlock();
    if (front.empty()) {
      switches_.ended(queue_.front()->ended);
    } else {
      for (Launch* launch : front)
        if (launch->use != Nodes::kShared && !launch->cleared) claim_nodes(*launch);
      start_some(front);
    }
    lock.lock();
    if (front.empty()) {  // the cleanup just done
      std::unique_ptr<Launch> done = std::move(queue_.front());
      queue_.pop_front();
      complete(*done);
    }
    // Every launch at the front that has nothing left to start is done.
    while (!queue_.empty() && queue_.front()->ended.empty() && queue_.front()->tasks.empty()) {
      std::unique_ptr<Launch> done = std::move(queue_.front());
      queue_.pop_front();
      complete(*done);
    }
  }
}

}  // namespace trellis
