#include "daemon/task_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "core/id_ranges.h"
#include "daemon/process.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How often tasks that announce their exit are looked at anyway (a notice lost to a full pipe).
constexpr auto kSweepInterval = std::chrono::seconds(1);
// How long a launch waits for an older attempt it killed to be gone.
constexpr auto kOldAttemptTimeout = std::chrono::seconds(10);
// The exit code of a task whose shepherd vanished without writing a status.
constexpr int kLostExitCode = 255;

std::string replace_job_id(std::string path, int64_t job_id) {
  for (size_t at = path.find("%j"); at != std::string::npos; at = path.find("%j", at)) {
    std::string id = std::to_string(job_id);
    path.replace(at, 2, id);
    at += id.size();
  }
  return path;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Reads one of the shepherd's "A B\n" files (daemon/shepherd.cc writes them in place with one
// write); false when it does not exist or its line is not whole yet.
template <typename T>
bool read_pair_file(const std::string& path, T& a, T& b) {
  std::string text = read_text(path);
  if (text.empty() || text.back() != '\n') return false;
  std::istringstream in(text);
  return static_cast<bool>(in >> a >> b);
}

// Parses the shepherd's "EXIT_CODE SIGNAL USER_USEC SYSTEM_USEC MAX_RSS_KB" file; false when it
// does not exist (yet). A file of an earlier shepherd has only the status: no usage then.
bool read_exit_file(const std::string& path, int& exit_code, int& signal,
                    std::optional<TaskUsage>& usage) {
  std::string text = read_text(path);
  if (text.empty() || text.back() != '\n') return false;
  std::istringstream in(text);
  if (!(in >> exit_code >> signal)) return false;
  TaskUsage used;
  if (in >> used.user_usec >> used.system_usec >> used.max_rss_kb && used.user_usec >= 0 &&
      used.system_usec >= 0 && used.max_rss_kb >= 0)
    usage = used;
  return true;
}

// The value of NAME in a "NAME=value" environment, or nullptr.
const std::string* find_env(const std::vector<std::string>& env, std::string_view name) {
  for (const std::string& entry : env) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return &entry;
    }
  }
  return nullptr;
}

// The tasks' pid and exit files live on a tmpfs when the agent may put them there (as root):
// `tasks` is then a link to /run/trellis/tasks-HASH, or /dev/shm/trellis-tasks-HASH where /run
// is no tmpfs (HASH of the link's path). They describe processes, which a reboot ends anyway,
// and ext4 made each file's creation costly under a stream of short jobs (an inode allocation
// searches past the inodes of the files just removed: a quarter of the shepherd's system time).
// A `tasks` that exists already, as a directory or a link, is kept (an earlier agent's tasks may
// be in it).
std::error_code make_tasks_dir(const std::string& tasks) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(tasks, ec))) return {};
  uint64_t hash = 1469598103934665603ull;  // FNV-1a of the path
  for (unsigned char c : tasks) hash = (hash ^ c) * 1099511628211ull;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "tasks-%016llx", static_cast<unsigned long long>(hash));
  auto on_tmpfs = [](const char* path) {
    struct statfs info {};
    return ::statfs(path, &info) == 0 && info.f_type == TMPFS_MAGIC;
  };
  std::string place;
  if (on_tmpfs("/run")) {
    ::mkdir("/run/trellis", 0755);
    place = std::string("/run/trellis/") + suffix;
  } else if (on_tmpfs("/dev/shm")) {
    place = std::string("/dev/shm/trellis-") + suffix;
  }
  if (::geteuid() == 0 && !place.empty()) {
    struct stat made {};
    const bool fresh = ::mkdir(place.c_str(), 0700) == 0;
    // Ours alone: a directory someone else made there (/dev/shm is everyone's) is not used.
    if ((fresh || errno == EEXIST) && ::lstat(place.c_str(), &made) == 0 && S_ISDIR(made.st_mode) &&
        made.st_uid == 0 && (made.st_mode & 077) == 0) {
      fs::create_directory_symlink(place, tasks, ec);
      if (!ec) return {};
    }
  }
  fs::create_directories(tasks, ec);
  return ec;
}
}  // namespace

std::string TaskKey::name() const {
  return std::to_string(job_id) + "." + std::to_string(attempt) + "." + std::to_string(step) + "." +
         node;
}

std::optional<TaskKey> parse_task_name(const std::string& name) {
  std::istringstream parts(name);
  TaskKey key;
  char dot1 = 0, dot2 = 0;
  if (!(parts >> key.job_id >> dot1 >> key.attempt >> dot2) || dot1 != '.' || dot2 != '.')
    return std::nullopt;
  std::string rest;
  std::getline(parts, rest);
  // "STEP.NODE", or a bare NODE (a file from before steps; node names start with a letter).
  size_t dot = rest.find('.');
  if (dot != std::string::npos && dot > 0) {
    std::string step = rest.substr(0, dot);
    bool number = step.find_first_not_of("-0123456789") == std::string::npos &&
                  step.find('-', 1) == std::string::npos && step != "-";
    if (number) {
      try {
        key.step = std::stoi(step);
      } catch (const std::exception&) {
        return std::nullopt;
      }
      rest = rest.substr(dot + 1);
    }
  }
  key.node = rest;
  if (key.node.empty()) return std::nullopt;
  return key;
}

TaskRunner::TaskRunner(Options options) : options_(std::move(options)) {}

std::string TaskRunner::tasks_dir() const {
  return options_.state_dir + "/tasks";
}
std::string TaskRunner::pid_file(const TaskKey& key) const {
  return tasks_dir() + "/" + key.name() + ".pid";
}
std::string TaskRunner::cpus_file(const TaskKey& key) const {
  return tasks_dir() + "/" + key.name() + ".cpus";
}
std::string TaskRunner::exit_file(const TaskKey& key) const {
  return tasks_dir() + "/" + key.name() + ".exit";
}

Result<std::unique_ptr<TaskRunner>> TaskRunner::open(Options options) {
  if (options.state_dir.empty()) return fail("state directory: empty");
  std::error_code ec;
  options.state_dir = fs::absolute(options.state_dir, ec).lexically_normal().string();
  fs::create_directories(options.state_dir, ec);
  if (!ec) ec = make_tasks_dir(options.state_dir + "/tasks");
  if (ec) {
    return fail(Error::Code::kUnavailable,
                "state directory " + options.state_dir + ": " + ec.message());
  }
  std::unique_ptr<TaskRunner> runner(new TaskRunner(std::move(options)));
  int notice[2];
  if (::pipe2(notice, O_CLOEXEC | O_NONBLOCK) != 0)
    return fail(Error::Code::kUnavailable, "cannot create a pipe: " + errno_text());
  runner->notice_read_ = notice[0];
  runner->notice_write_ = notice[1];
  std::string binary = runner->options_.shepherd_binary.empty() ? ShepherdClient::default_binary()
                                                                : runner->options_.shepherd_binary;
  Result<std::unique_ptr<ShepherdClient>> shepherd =
      ShepherdClient::start(binary, notice[1], runner->options_.state_dir);
  if (!shepherd) return shepherd.error();
  runner->shepherd_ = std::move(*shepherd);
  if (Status loaded = runner->load(); !loaded) return loaded.error();
  runner->monitor_ = std::thread([r = runner.get()] { r->monitor(); });
  return runner;
}

TaskRunner::~TaskRunner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (monitor_.joinable()) monitor_.join();
  shepherd_.reset();
  if (notice_read_ >= 0) ::close(notice_read_);
  if (notice_write_ >= 0) ::close(notice_write_);
  // A tasks directory on /run that nothing is left in goes with its link.
  std::error_code ec;
  if (tasks_.empty() && fs::is_symlink(tasks_dir(), ec)) {
    fs::path target = fs::read_symlink(tasks_dir(), ec);
    if (!ec && ::rmdir(target.c_str()) == 0) ::unlink(tasks_dir().c_str());
  }
  // Running shepherds are left to init: they write their status files, which the next agent
  // reads.
}

Status TaskRunner::load() {
  // Acknowledged exits, one line each, appended as they are acknowledged.
  {
    std::ifstream log(acknowledged_log());
    for (std::string line; std::getline(log, line);) {
      std::istringstream fields(line);
      Acknowledged a;
      if (!(fields >> a.key.job_id >> a.key.attempt >> a.key.node >> a.exit_code >> a.signal))
        continue;
      if (!(fields >> a.key.step)) a.key.step = 0;  // a line from before steps
      acknowledged_.push_back(a);
    }
    acknowledged_log_lines_ = acknowledged_.size();
    while (acknowledged_.size() > options_.remembered_acknowledged) acknowledged_.pop_front();
  }
  // Every task with a pid file, running or ended; the files of one acknowledged just before the
  // last agent stopped are removed now.
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(tasks_dir(), ec)) {
    std::string name = entry.path().filename().string();
    if (!name.ends_with(".pid")) continue;
    std::optional<TaskKey> key = parse_task_name(name.substr(0, name.size() - 4));
    if (!key || tasks_.contains(*key)) continue;
    if (std::any_of(acknowledged_.begin(), acknowledged_.end(),
                    [&](const Acknowledged& a) { return a.key == *key; })) {
      ::unlink(pid_file(*key).c_str());
      ::unlink(exit_file(*key).c_str());
      ::unlink(cpus_file(*key).c_str());
      continue;
    }
    Task task;
    task.key = *key;
    // A shepherd may be between the file's creation and its one write: looked at again shortly.
    bool read = false;
    for (int look = 0; look < 5 && !read; ++look) {
      if (look > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      read = read_pair_file(entry.path().string(), task.shepherd, task.process_group);
    }
    if (!read) continue;
    // Whether its leader is a job shell, from its name (an adopted task's spec is gone).
    task.shell =
        read_text("/proc/" + std::to_string(task.process_group) + "/comm") == "trellis-shell\n";
    task.shepherd_start = process_start_time(task.shepherd);
    if (Result<std::vector<int>> cpus = parse_id_ranges(read_text(cpus_file(*key)), 1 << 16))
      task.cpus = *cpus;
    tasks_[*key] = task;
  }
  if (ec) return fail(Error::Code::kUnavailable, tasks_dir() + ": " + ec.message());
  for (auto& [key, task] : tasks_) check(task);
  return Ok{};
}

bool TaskRunner::check(Task& task) {
  if (!task.running) return false;
  std::optional<TaskUsage> usage;
  auto ended = [&](int exit_code, int signal) {
    task.running = false;
    task.exit_code = exit_code;
    task.signal = signal;
    task.usage = usage;
    return true;
  };
  int exit_code = 0, signal = 0;
  if (read_exit_file(exit_file(task.key), exit_code, signal, usage))
    return ended(exit_code, signal);
  bool shepherd_gone =
      !process_running(task.shepherd) || process_start_time(task.shepherd) != task.shepherd_start;
  if (!shepherd_gone) return false;
  // Its status may have been written between the first look and its exit.
  if (read_exit_file(exit_file(task.key), exit_code, signal, usage))
    return ended(exit_code, signal);
  if (task.process_group > 0) ::kill(-task.process_group, SIGKILL);  // nobody watches it now
  return ended(kLostExitCode, 0);
}

std::vector<TaskKey> TaskRunner::wait_for_notices(std::chrono::milliseconds timeout) {
  std::vector<TaskKey> noticed;
  struct pollfd ready {
    notice_read_, POLLIN, 0
  };
  if (::poll(&ready, 1, static_cast<int>(timeout.count())) <= 0) return noticed;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(notice_read_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    notice_buffer_.append(buffer, static_cast<size_t>(n));
  }
  size_t start = 0;
  for (size_t end; (end = notice_buffer_.find('\n', start)) != std::string::npos; start = end + 1) {
    if (std::optional<TaskKey> key = parse_task_name(notice_buffer_.substr(start, end - start)))
      noticed.push_back(*key);
  }
  notice_buffer_.erase(0, start);
  return noticed;
}

void TaskRunner::monitor() {
  Clock::time_point next_sweep = Clock::now();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    // Polled often only while something needs it (an adopted task, whose shepherd announces
    // nothing; a SIGKILL due after a grace period); otherwise the notices wake it, and the sweep.
    auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(kSweepInterval);
    for (const auto& [key, task] : tasks_)
      if (task.running && (!task.announces_exit || task.kill_at != Clock::time_point{}))
        timeout = std::min(timeout, options_.poll_interval);
    lock.unlock();
    std::vector<TaskKey> noticed = wait_for_notices(timeout);
    lock.lock();
    if (stopping_) break;
    bool any_ended = false;
    Clock::time_point now = Clock::now();
    bool sweep = now >= next_sweep;
    if (sweep) next_sweep = now + kSweepInterval;
    for (auto& [key, task] : tasks_) {
      if (task.running && task.kill_at != Clock::time_point{} && now >= task.kill_at) {
        if (task.process_group > 0) ::kill(-task.process_group, SIGKILL);
        task.kill_at = {};
      }
      // A task that announces its exit is looked at when it does (or by the sweep).
      if (sweep || !task.announces_exit) any_ended |= check(task);
    }
    for (const TaskKey& key : noticed) {
      auto it = tasks_.find(key);
      if (it != tasks_.end()) {
        any_ended |= check(it->second);
      } else {
        // Its shepherd started it and saw it end before launch_all() recorded it (the plans of
        // a batch are answered together): record_started() announces it again.
        early_notices_.push_back(key);
        if (early_notices_.size() > kEarlyNoticesKept) early_notices_.pop_front();
      }
    }
    if (any_ended) {
      changed_.notify_all();
      if (options_.on_exit) {
        lock.unlock();
        options_.on_exit();
        lock.lock();
      }
    }
  }
}

bool TaskRunner::wait_ended(const TaskKey& key, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] {
    auto it = tasks_.find(key);
    return it == tasks_.end() || !it->second.running;
  });
}

Result<std::optional<ShepherdPlan>> TaskRunner::plan_of(const TaskSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return fail("argv: empty command");

  // Known already, or superseded by a later attempt: nothing to do.
  std::vector<TaskKey> older;
  {
    std::lock_guard lock(mutex_);
    if (tasks_.contains(spec.key)) return std::optional<ShepherdPlan>();
    auto acknowledged = std::find_if(acknowledged_.begin(), acknowledged_.end(),
                                     [&](const Acknowledged& a) { return a.key == spec.key; });
    if (acknowledged != acknowledged_.end()) {
      // Ended and recorded once, then launched again: a controller lost what it recorded (it
      // restarted mid-job). Its exit is reported again; the task does not run again. (Should
      // this agent restart before that report is acknowledged, the log still holds the task.)
      Task again;
      again.key = spec.key;
      again.running = false;
      again.exit_code = acknowledged->exit_code;
      again.signal = acknowledged->signal;
      tasks_[spec.key] = again;
      acknowledged_.erase(acknowledged);
      return std::optional<ShepherdPlan>();
    }
    auto later = [&](const TaskKey& k) {
      return k.job_id == spec.key.job_id && k.node == spec.key.node && k.attempt > spec.key.attempt;
    };
    if (std::any_of(tasks_.begin(), tasks_.end(), [&](const auto& t) { return later(t.first); }) ||
        std::any_of(acknowledged_.begin(), acknowledged_.end(),
                    [&](const Acknowledged& a) { return later(a.key); })) {
      return std::optional<ShepherdPlan>();
    }
    for (auto& [key, task] : tasks_) {
      if (key.job_id == spec.key.job_id && key.node == spec.key.node &&
          key.attempt < spec.key.attempt && task.running) {
        if (task.process_group > 0) ::kill(-task.process_group, SIGKILL);
        older.push_back(key);
      }
    }
  }
  for (const TaskKey& key : older) {
    if (!wait_ended(key, kOldAttemptTimeout)) {
      return fail(Error::Code::kUnavailable,
                  "task " + key.name() + " (an older attempt) did not end after SIGKILL");
    }
  }

  ShepherdPlan p;
  p.label = "trellis-agent: task " + spec.key.name() + ": ";
  p.argv = spec.argv;
  p.env = spec.env;

  // The user, and the groups that go with them.
  uid_t self = ::geteuid();
  uid_t uid = spec.uid < 0 ? self : static_cast<uid_t>(spec.uid);
  gid_t gid = spec.gid < 0 ? ::getegid() : static_cast<gid_t>(spec.gid);
  std::string home;
  if (uid != self || spec.cwd.empty()) {
    std::vector<char> buffer(16384);
    struct passwd entry {};
    struct passwd* found = nullptr;
    if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
      home = entry.pw_dir ? entry.pw_dir : "";
      if (uid != self) {
        int count = 64;
        p.groups.resize(count);
        if (::getgrouplist(entry.pw_name, gid, p.groups.data(), &count) < 0) {
          p.groups.resize(count);
          ::getgrouplist(entry.pw_name, gid, p.groups.data(), &count);
        }
        p.groups.resize(std::max(count, 0));
      }
    }
  }
  if (uid != self) {
    if (self != 0) {
      return fail("uid: the agent runs as uid " + std::to_string(self) +
                  " and cannot start processes as uid " + std::to_string(uid));
    }
    p.switch_user = true;
    p.uid = uid;
    p.gid = gid;
    if (p.groups.empty()) p.groups.push_back(gid);
  }

  p.cwd = !spec.cwd.empty() ? spec.cwd : (!home.empty() ? home : "/");
  if (p.cwd[0] != '/') return fail("cwd: '" + spec.cwd + "' is not an absolute path");
  auto resolve = [&](const std::string& file) {
    std::string path = replace_job_id(file, spec.key.job_id);
    return path[0] == '/' ? path : p.cwd + "/" + path;
  };
  p.output = resolve(spec.output.empty() ? "trellis-%j.out" : spec.output);
  p.error = spec.error.empty() ? p.output : resolve(spec.error);

  // Where exec looks for argv[0]: itself when it holds a '/', else each directory of the job's
  // PATH.
  const std::string& command = spec.argv[0];
  if (!spec.program.empty()) p.candidates.push_back(spec.program);
  if (command.find('/') != std::string::npos) {
    p.candidates.push_back(command);
  } else {
    const std::string* path_entry = find_env(spec.env, "PATH");
    std::string path = path_entry ? path_entry->substr(5) : "/usr/local/bin:/usr/bin:/bin";
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      p.candidates.push_back((dir.empty() ? "." : dir) + "/" + command);
    }
  }
  p.pid_file = pid_file(spec.key);
  p.exit_file = exit_file(spec.key);
  p.notice = spec.key.name() + "\n";
  p.cgroup_procs = spec.cgroup_procs;
  p.limit_procs = spec.limit_procs;
  // Leftovers of an earlier life of this key (never acknowledged, then forgotten) must not be
  // mistaken for this run's status.
  ::unlink(p.exit_file.c_str());

  return std::optional<ShepherdPlan>(std::move(p));
}

void TaskRunner::record_started(const TaskSpec& spec, const ShepherdPlan& plan,
                                const ShepherdClient::Started& started) {
  const TaskKey& key = spec.key;
  std::lock_guard lock(mutex_);
  Task task;
  task.key = key;
  task.shell = spec.shell;
  task.error_file = plan.error;
  task.uid = spec.uid;
  task.limited = spec.limits.has_value();
  task.cpus = spec.shared_cpus;
  if (!spec.shared_cpus.empty())
    std::ofstream(cpus_file(key)) << format_id_ranges(
        std::vector<int64_t>(spec.shared_cpus.begin(), spec.shared_cpus.end()));
  task.shepherd = started.shepherd;
  // One shepherd serves many launches: its start time is read once.
  if (shepherd_start_.first != started.shepherd)
    shepherd_start_ = {started.shepherd, process_start_time(started.shepherd)};
  task.shepherd_start = shepherd_start_.second;
  task.process_group = started.job;
  task.announces_exit = true;
  tasks_[key] = task;
  auto early = std::find(early_notices_.begin(), early_notices_.end(), key);
  if (early != early_notices_.end()) {
    early_notices_.erase(early);
    const std::string notice = key.name() + "\n";
    // One write, atomic on a pipe; should the pipe be full, the monitor's sweep finds the exit.
    if (notice.size() <= PIPE_BUF) (void)!::write(notice_write_, notice.data(), notice.size());
  }
}

Result<bool> TaskRunner::launch(const TaskSpec& spec) {
  return launch_all({spec}).front();
}

std::vector<Result<bool>> TaskRunner::launch_all(const std::vector<TaskSpec>& specs) {
  std::lock_guard launching(launch_mutex_);
  std::vector<Result<bool>> results(specs.size(), Result<bool>(false));
  std::vector<ShepherdPlan> plans;
  std::vector<size_t> planned;  // the spec of each plan
  for (size_t i = 0; i < specs.size(); ++i) {
    // The same task twice in one batch starts once.
    if (std::any_of(planned.begin(), planned.end(),
                    [&](size_t j) { return specs[j].key == specs[i].key; }))
      continue;
    Result<std::optional<ShepherdPlan>> plan = plan_of(specs[i]);
    if (!plan) {
      results[i] = plan.error();
    } else if (*plan) {
      plans.push_back(std::move(**plan));
      planned.push_back(i);
    }
  }
  // Every plan goes to the shepherd before the first answer is read: it starts one job while
  // this thread writes the next plan (one at a time, each launch waited for the shepherd's
  // clone and the job's exec, which bounded an agent near 500 short jobs a second here).
  std::vector<Result<ShepherdClient::Started>> started = shepherd_->spawn_all(plans);
  for (size_t k = 0; k < planned.size(); ++k) {
    const TaskSpec& spec = specs[planned[k]];
    if (!started[k]) {
      ::unlink(plans[k].pid_file.c_str());
      results[planned[k]] = fail(Error::Code::kUnavailable,
                                 "task " + spec.key.name() + ": " + started[k].error().message);
      continue;
    }
    record_started(spec, plans[k], *started[k]);
    results[planned[k]] = true;
  }
  return results;
}

bool TaskRunner::record_ended(const TaskKey& key, int exit_code, int signal) {
  {
    std::lock_guard lock(mutex_);
    if (tasks_.contains(key) || std::any_of(acknowledged_.begin(), acknowledged_.end(),
                                            [&](const Acknowledged& a) { return a.key == key; }))
      return false;
    Task task;
    task.key = key;
    task.running = false;
    task.exit_code = exit_code;
    task.signal = signal;
    tasks_[key] = task;
  }
  changed_.notify_all();
  if (options_.on_exit) options_.on_exit();
  return true;
}

int TaskRunner::signal(int64_t job_id, int attempt, int signal, std::chrono::milliseconds grace,
                       std::optional<int> step) {
  int count = 0;
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, task] : tasks_) {
      if (key.job_id != job_id || (attempt != 0 && key.attempt != attempt)) continue;
      if (step && key.step != *step) continue;
      if (!task.running || task.process_group <= 0) continue;
      if (::kill(-task.process_group, signal == 0 ? SIGTERM : signal) != 0) continue;
      if (signal == 0) {
        ::kill(-task.process_group, SIGCONT);  // a suspended job must run to see its SIGTERM
        task.kill_at = Clock::now() + grace;
      }
      ++count;
    }
  }
  return count;
}

std::vector<TaskInfo> TaskRunner::tasks() const {
  std::lock_guard lock(mutex_);
  std::vector<TaskInfo> out;
  for (const auto& [key, task] : tasks_) {
    out.push_back({key, task.running, task.exit_code, task.signal, task.process_group, task.shell,
                   task.error_file, task.uid, task.limited, task.cpus, task.usage});
  }
  return out;
}

std::vector<TaskInfo> TaskRunner::unacknowledged_exits() const {
  std::vector<TaskInfo> out = tasks();
  std::erase_if(out, [](const TaskInfo& t) { return t.running; });
  return out;
}

std::string TaskRunner::acknowledged_log() const {
  return options_.state_dir + "/acknowledged.log";
}

void TaskRunner::acknowledge(const std::vector<TaskKey>& keys) {
  std::lock_guard lock(mutex_);
  std::string appended;
  std::vector<TaskKey> done;
  for (const TaskKey& key : keys) {
    auto it = tasks_.find(key);
    if (it == tasks_.end() || it->second.running) continue;
    acknowledged_.push_back({key, it->second.exit_code, it->second.signal});
    appended += std::to_string(key.job_id) + " " + std::to_string(key.attempt) + " " + key.node +
                " " + std::to_string(it->second.exit_code) + " " +
                std::to_string(it->second.signal) + " " + std::to_string(key.step) + "\n";
    tasks_.erase(it);
    done.push_back(key);
    if (acknowledged_.size() > options_.remembered_acknowledged) acknowledged_.pop_front();
  }
  if (done.empty()) return;
  // The log first, then the task files: a crash in between leaves files of a task the log
  // holds, which load() removes.
  acknowledged_log_lines_ += done.size();
  if (acknowledged_log_lines_ > 2 * options_.remembered_acknowledged) {
    // Rewritten from memory when it holds twice what is remembered.
    std::string all;
    for (const Acknowledged& a : acknowledged_)
      all += std::to_string(a.key.job_id) + " " + std::to_string(a.key.attempt) + " " + a.key.node +
             " " + std::to_string(a.exit_code) + " " + std::to_string(a.signal) + " " +
             std::to_string(a.key.step) + "\n";
    std::string temporary = acknowledged_log() + ".tmp";
    std::ofstream(temporary, std::ios::trunc) << all;
    if (::rename(temporary.c_str(), acknowledged_log().c_str()) == 0)
      acknowledged_log_lines_ = acknowledged_.size();
  } else {
    std::ofstream(acknowledged_log(), std::ios::app) << appended;
  }
  for (const TaskKey& key : done) {
    ::unlink(pid_file(key).c_str());
    ::unlink(exit_file(key).c_str());
    ::unlink(cpus_file(key).c_str());
  }
}

}  // namespace trellis
