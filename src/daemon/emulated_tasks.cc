#include "daemon/emulated_tasks.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <string_view>

namespace trellis {
namespace {

// The longest emulated run: far beyond any test, short enough to stay clear of overflow.
constexpr double kMaxSeconds = 365.0 * 24 * 3600;

// Seconds in sleep(1)'s syntax ("2", "0.5", "3m"), or a negative number when it is not one.
double sleep_seconds(std::string_view text) {
  if (text.empty()) return -1;
  double unit = 1;
  switch (text.back()) {
    case 's':
      text.remove_suffix(1);
      break;
    case 'm':
      unit = 60, text.remove_suffix(1);
      break;
    case 'h':
      unit = 3600, text.remove_suffix(1);
      break;
    case 'd':
      unit = 86400, text.remove_suffix(1);
      break;
    default:
      break;
  }
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos) return -1;
  std::string number(text);
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value)) return -1;
  return std::min(value * unit, kMaxSeconds);
}

// The command's name without its directory ("/bin/sleep" -> "sleep").
std::string_view base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool stops(int signal) {
  return signal == SIGSTOP || signal == SIGTSTP || signal == SIGTTIN || signal == SIGTTOU;
}
bool ignored(int signal) {
  return signal == SIGCHLD || signal == SIGURG || signal == SIGWINCH;
}

}  // namespace

EmulatedTasks::EmulatedTasks(Options options) : options_(std::move(options)) {
  timer_ = std::thread([this] { run(); });
}

EmulatedTasks::~EmulatedTasks() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (timer_.joinable()) timer_.join();
}

EmulatedTasks::Behaviour EmulatedTasks::behaviour_of(const std::vector<std::string>& argv) {
  Behaviour b;
  if (argv.empty()) return b;
  std::string_view command = base_name(argv[0]);
  if (command == "false") {
    b.exit_code = 1;
  } else if (command == "sleep" && argv.size() == 2) {
    double seconds = sleep_seconds(argv[1]);
    if (seconds > 0)
      b.runs = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  return b;
}

std::vector<std::string> EmulatedTasks::command_of_script(std::string_view script) {
  std::vector<std::string> words;
  int commands = 0;
  size_t at = 0;
  while (at < script.size()) {
    size_t end = script.find('\n', at);
    if (end == std::string_view::npos) end = script.size();
    std::string_view line = script.substr(at, end - at);
    at = end + 1;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line[first] == '#') continue;
    if (++commands > 1) return {"sh"};
    for (size_t w = first; w < line.size();) {
      size_t stop = line.find_first_of(" \t\r", w);
      if (stop == std::string_view::npos) stop = line.size();
      if (stop > w) words.emplace_back(line.substr(w, stop - w));
      w = stop + 1;
    }
  }
  if (!words.empty() && words.front() == "exec") words.erase(words.begin());
  return words.empty() ? std::vector<std::string>{"sh"} : words;
}

void EmulatedTasks::end(Task& task, int exit_code, int signal) {
  task.running = false;
  task.exit_code = exit_code;
  task.signal = signal;
}

void EmulatedTasks::update_clock(Task& task, bool was_paused) {
  bool paused = task.stopped || task.frozen;
  if (paused == was_paused || !task.running) return;
  Clock::time_point now = Clock::now();
  if (paused) {
    task.left = std::max(Clock::duration::zero(), task.ends_at - now);
  } else {
    task.ends_at = now + task.left;
  }
}

void EmulatedTasks::remember(const TaskKey& key) {
  attempts_[{key.job_id, key.node}].insert(key.attempt);
}

void EmulatedTasks::forget_if_gone(const TaskKey& key) {
  if (tasks_.contains(key) || acknowledged_.contains(key)) return;
  auto it = attempts_.find({key.job_id, key.node});
  if (it == attempts_.end()) return;
  it->second.erase(key.attempt);
  if (it->second.empty()) attempts_.erase(it);
}

Result<bool> EmulatedTasks::launch(const TaskSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return fail("argv: empty command");
  bool ended_older = false;
  {
    std::lock_guard lock(mutex_);
    if (tasks_.contains(spec.key)) return false;
    if (auto acknowledged = acknowledged_.find(spec.key); acknowledged != acknowledged_.end()) {
      // Launched again after its exit was recorded: its exit is reported again (TaskRunner).
      Task again;
      end(again, acknowledged->second.exit_code, acknowledged->second.signal);
      tasks_[spec.key] = again;
      acknowledged_.erase(acknowledged);
      std::erase(acknowledged_order_, spec.key);
      return false;
    }
    if (auto known = attempts_.find({spec.key.job_id, spec.key.node}); known != attempts_.end()) {
      // A later attempt here: this one is superseded. Earlier ones still running are killed.
      if (*known->second.rbegin() > spec.key.attempt) return false;
      for (int attempt : known->second) {
        auto older = tasks_.find({spec.key.job_id, attempt, spec.key.node});
        if (older != tasks_.end() && older->second.running) {
          end(older->second, 0, SIGKILL);
          ended_older = true;
        }
      }
    }
    Task task;
    task.behaviour = behaviour_of(spec.argv);
    task.ends_at = Clock::now() + task.behaviour.runs;
    due_.emplace(task.ends_at, spec.key);
    tasks_[spec.key] = task;
    remember(spec.key);
  }
  wake_.notify_all();
  if (ended_older && options_.on_exit) options_.on_exit();
  return true;
}

bool EmulatedTasks::record_ended(const TaskKey& key, int exit_code, int signal) {
  {
    std::lock_guard lock(mutex_);
    if (tasks_.contains(key) || acknowledged_.contains(key)) return false;
    Task task;
    end(task, exit_code, signal);
    tasks_[key] = task;
    remember(key);
  }
  if (options_.on_exit) options_.on_exit();
  return true;
}

int EmulatedTasks::signal(int64_t job_id, int attempt, int signal,
                          std::chrono::milliseconds /*grace*/, std::optional<int> step) {
  int count = 0;
  bool any_ended = false;
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, task] : tasks_) {
      if (key.job_id != job_id || (attempt != 0 && key.attempt != attempt) || !task.running ||
          (step && key.step != *step))
        continue;
      ++count;
      bool was_paused = task.stopped || task.frozen;
      if (stops(signal)) {
        task.stopped = true;
      } else if (signal == SIGCONT) {
        task.stopped = false;
      } else if (!ignored(signal)) {
        end(task, 0, signal == 0 ? SIGTERM : signal);
        any_ended = true;
        continue;
      }
      update_clock(task, was_paused);
      if (was_paused && !(task.stopped || task.frozen)) due_.emplace(task.ends_at, key);
    }
  }
  wake_.notify_all();
  if (any_ended && options_.on_exit) options_.on_exit();
  return count;
}

void EmulatedTasks::set_frozen(int64_t job_id, int attempt, bool frozen) {
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, task] : tasks_) {
      if (key.job_id != job_id || key.attempt != attempt || !task.running) continue;
      bool was_paused = task.stopped || task.frozen;
      task.frozen = frozen;
      update_clock(task, was_paused);
      if (was_paused && !(task.stopped || task.frozen)) due_.emplace(task.ends_at, key);
    }
  }
  wake_.notify_all();
}

std::vector<TaskInfo> EmulatedTasks::tasks() const {
  std::lock_guard lock(mutex_);
  std::vector<TaskInfo> out;
  out.reserve(tasks_.size());
  for (const auto& [key, task] : tasks_) {
    TaskInfo info;
    info.key = key;
    info.running = task.running;
    info.exit_code = task.exit_code;
    info.signal = task.signal;
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<TaskInfo> EmulatedTasks::unacknowledged_exits() const {
  std::lock_guard lock(mutex_);
  std::vector<TaskInfo> out;
  for (const auto& [key, task] : tasks_) {
    if (task.running) continue;
    TaskInfo info;
    info.key = key;
    info.exit_code = task.exit_code;
    info.signal = task.signal;
    out.push_back(std::move(info));
  }
  return out;
}

void EmulatedTasks::acknowledge(const std::vector<TaskKey>& keys) {
  std::lock_guard lock(mutex_);
  for (const TaskKey& key : keys) {
    auto it = tasks_.find(key);
    if (it == tasks_.end() || it->second.running) continue;
    acknowledged_[key] = {it->second.exit_code, it->second.signal};
    acknowledged_order_.push_back(key);
    tasks_.erase(it);
    if (acknowledged_order_.size() > options_.remembered_acknowledged) {
      TaskKey oldest = std::move(acknowledged_order_.front());
      acknowledged_order_.pop_front();
      acknowledged_.erase(oldest);
      forget_if_gone(oldest);
    }
  }
}

void EmulatedTasks::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (due_.empty()) {
      wake_.wait(lock);
      continue;
    }
    Clock::time_point next = due_.begin()->first;
    if (Clock::now() < next) {
      wake_.wait_until(lock, next);
      continue;
    }
    // Every clock that ran out: one round, one on_exit (the agent reports them in one batch).
    bool any_ended = false;
    Clock::time_point now = Clock::now();
    while (!due_.empty() && due_.begin()->first <= now) {
      auto [at, key] = *due_.begin();
      due_.erase(due_.begin());
      auto it = tasks_.find(key);
      // Entries of clocks stopped or ended since are stale.
      if (it == tasks_.end()) continue;
      Task& task = it->second;
      if (!task.running || task.stopped || task.frozen || task.ends_at != at) continue;
      end(task, task.behaviour.exit_code, 0);
      any_ended = true;
    }
    if (any_ended && options_.on_exit) {
      lock.unlock();
      options_.on_exit();
      lock.lock();
    }
  }
}

}  // namespace trellis
