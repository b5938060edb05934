#include "daemon/task_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "daemon/process.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

// How many acknowledged keys are remembered, so that a launch repeated after its exit was
// acknowledged stays a no-op. A controller relaunches only jobs it still thinks run, which are
// at most a few per node; the whole list is rewritten with the state file at every change, so
// it is kept short.
constexpr size_t kRememberedAcknowledged = 1024;
// How long a launch waits for an older attempt it killed to be gone.
constexpr auto kOldAttemptTimeout = std::chrono::seconds(10);
// The exit code of a task whose shepherd vanished without writing a status.
constexpr int kLostExitCode = 255;

std::string errno_text() {
  return std::strerror(errno);
}

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

// Parses the shepherd's "EXIT_CODE SIGNAL" file; false when it does not exist (yet).
bool read_exit_file(const std::string& path, int& exit_code, int& signal) {
  std::ifstream in(path);
  return static_cast<bool>(in >> exit_code >> signal);
}

// --- What the shepherd and the job's process may use: async-signal-safe only ----------------

// Writes the decimal form of `value` into `out` (at least 24 bytes); returns its length.
size_t format_int(long long value, char* out) {
  char digits[24];
  size_t n = 0;
  bool negative = value < 0;
  unsigned long long v = negative ? 0ULL - static_cast<unsigned long long>(value)
                                  : static_cast<unsigned long long>(value);
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  size_t length = 0;
  if (negative) out[length++] = '-';
  while (n > 0) out[length++] = digits[--n];
  return length;
}

void write_all(int fd, const char* text, size_t length) {
  while (length > 0) {
    ssize_t n = ::write(fd, text, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text += n;
    length -= static_cast<size_t>(n);
  }
}

void write_text(int fd, const char* text) {
  write_all(fd, text, std::strlen(text));
}

// Writes "A B\n" to `path` through `temporary` and a rename, so a reader sees all or nothing.
void write_pair_file(const char* temporary, const char* path, long long a, long long b) {
  char text[64];
  size_t length = format_int(a, text);
  text[length++] = ' ';
  length += format_int(b, text + length);
  text[length++] = '\n';
  int fd = ::open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  write_all(fd, text, length);
  ::close(fd);
  ::rename(temporary, path);
}

void reset_signals() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (int s = 1; s < NSIG; ++s) ::sigaction(s, &action, nullptr);  // SIGKILL/SIGSTOP: refused
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Everything the shepherd and the job need, prepared before fork (no allocation after it).
struct Prepared {
  std::string label;  // "trellis-agent: task JOB.ATTEMPT.NODE: " for messages
  std::vector<std::string> argv_storage, env_storage, candidates_storage;
  std::vector<char*> argv, env, candidates;  // null-terminated
  std::string cwd, output, error;
  bool same_file = false;
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::string pid_file, pid_temporary, exit_file, exit_temporary;
  int max_fd = 1024;
};

// Writes "trellis-agent: task K: WHAT 'SUBJECT': REASON\n" to fd 2.
void report(const Prepared& p, const char* what, const char* subject, int error) {
  write_text(2, p.label.c_str());
  write_text(2, what);
  write_text(2, " '");
  write_text(2, subject);
  write_text(2, "': ");
  const char* reason = strerrordesc_np(error);
  write_text(2, reason ? reason : "unknown error");
  write_text(2, "\n");
}

// The job's process: new process group, the user, its files, its directory, then exec.
[[noreturn]] void run_job(const Prepared& p) {
  ::setpgid(0, 0);
  reset_signals();
  ::close(3);  // the shepherd's pipe to the agent
  if (p.switch_user) {
    if (::setgroups(p.groups.size(), p.groups.data()) != 0 || ::setgid(p.gid) != 0 ||
        ::setuid(p.uid) != 0) {
      int error = errno;
      // Not the user: the reason goes to the agent's log (fd 2) rather than create the
      // user's files as root.
      report(p, "cannot switch to the job's user for", p.argv[0], error);
      ::_exit(127);
    }
  }
  int in = ::open("/dev/null", O_RDONLY);
  if (in >= 0 && in != 0) {
    ::dup2(in, 0);
    ::close(in);
  }
  int flags = O_WRONLY | O_CREAT | O_APPEND;
  int out = ::open(p.output.c_str(), flags, 0644);
  if (out < 0) {
    report(p, "cannot open output file", p.output.c_str(), errno);
    ::_exit(127);
  }
  int err = p.same_file ? out : ::open(p.error.c_str(), flags, 0644);
  if (err < 0) {
    report(p, "cannot open error file", p.error.c_str(), errno);
    ::_exit(127);
  }
  ::dup2(out, 1);
  ::dup2(err, 2);
  if (out > 2) ::close(out);
  if (err > 2 && err != out) ::close(err);
  if (::chdir(p.cwd.c_str()) != 0) {
    report(p, "cannot change to directory", p.cwd.c_str(), errno);
    ::_exit(127);
  }
  // Each candidate path in turn (argv[0] itself when it names a path): execvp's rule, but with
  // the job's PATH rather than the agent's.
  int error = ENOENT;
  for (char* const* candidate = p.candidates.data(); *candidate != nullptr; ++candidate) {
    ::execve(*candidate, p.argv.data(), p.env.data());
    if (errno == EACCES || errno == ENOEXEC || error == ENOENT) error = errno;
  }
  report(p, "cannot run", p.argv[0], error);
  ::_exit(error == EACCES || error == ENOEXEC ? 126 : 127);
}

// The shepherd: own session (so it outlives the agent), forks the job, tells the agent the job's
// pid through fd 3, waits, cleans up the job's process group, records the status.
[[noreturn]] void run_shepherd(const Prepared& p, int pipe_out) {
  reset_signals();
  ::signal(SIGPIPE, SIG_IGN);  // fd 2 is the agent's log, which may be gone
  ::setsid();
  // Shown by ps -o comm, so that a shepherd is not taken for an agent (it has the agent's
  // command line).
  ::prctl(PR_SET_NAME, "trellis-shep", 0, 0, 0);
  if (pipe_out != 3) {
    ::dup2(pipe_out, 3);
    ::close(pipe_out);
  }
  // Nothing of the agent's (its listening socket above all) may outlive it in here.
  if (::close_range(4, ~0U, 0) != 0) {
    for (int fd = 4; fd < p.max_fd; ++fd) ::close(fd);
  }
  int null = ::open("/dev/null", O_RDWR);
  if (null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    if (null > 2) ::close(null);
  }
  pid_t job = ::fork();
  if (job == 0) run_job(p);
  if (job < 0) {
    int error = errno;
    pid_t none = -1;
    write_all(3, reinterpret_cast<const char*>(&none), sizeof none);
    report(p, "cannot fork the job's process for", p.argv[0], error);
    ::_exit(1);
  }
  ::setpgid(job, job);  // also done by the job: whichever runs first, the group exists now
  write_pair_file(p.pid_temporary.c_str(), p.pid_file.c_str(), ::getpid(), job);
  write_all(3, reinterpret_cast<const char*>(&job), sizeof job);
  ::close(3);

  // Wait without reaping, so that the job's pid (its group's id) cannot be reused while the
  // group is cleaned up; then reap.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(job), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  ::kill(-job, SIGKILL);  // whatever the command left behind in its group
  int status = 0;
  while (::waitpid(job, &status, 0) < 0 && errno == EINTR) {
  }
  int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  int signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  write_pair_file(p.exit_temporary.c_str(), p.exit_file.c_str(), exit_code, signal);
  ::_exit(0);
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

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::string TaskKey::name() const {
  return std::to_string(job_id) + "." + std::to_string(attempt) + "." + node;
}

TaskRunner::TaskRunner(Options options) : options_(std::move(options)) {}

std::string TaskRunner::tasks_dir() const {
  return options_.state_dir + "/tasks";
}
std::string TaskRunner::pid_file(const TaskKey& key) const {
  return tasks_dir() + "/" + key.name() + ".pid";
}
std::string TaskRunner::exit_file(const TaskKey& key) const {
  return tasks_dir() + "/" + key.name() + ".exit";
}

Result<std::unique_ptr<TaskRunner>> TaskRunner::open(Options options) {
  if (options.state_dir.empty()) return fail("state directory: empty");
  std::error_code ec;
  options.state_dir = fs::absolute(options.state_dir, ec).lexically_normal().string();
  fs::create_directories(options.state_dir + "/tasks", ec);
  if (ec) {
    return fail(Error::Code::kUnavailable,
                "state directory " + options.state_dir + ": " + ec.message());
  }
  std::unique_ptr<TaskRunner> runner(new TaskRunner(std::move(options)));
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
  // Shepherds forked here and still running are left to init: they write their status files,
  // which the next agent reads.
}

Status TaskRunner::load() {
  std::string path = options_.state_dir + "/tasks.json";
  if (fs::exists(path)) {
    json state = json::parse(read_text(path), nullptr, /*allow_exceptions=*/false);
    if (state.is_discarded() || !state.is_object()) {
      return fail(Error::Code::kInternal, path + ": not a task state file (bad JSON)");
    }
    for (const json& t : state.value("tasks", json::array())) {
      Task task;
      task.key = {t.value("job", int64_t{0}), t.value("attempt", 0), t.value("node", "")};
      task.shepherd = t.value("shepherd", 0);
      task.shepherd_start = t.value("shepherd_start", -1LL);
      task.process_group = t.value("process_group", 0);
      task.running = t.value("running", false);
      task.exit_code = t.value("exit_code", 0);
      task.signal = t.value("signal", 0);
      tasks_[task.key] = task;
    }
  }
  // Acknowledged exits, one line each, appended as they are acknowledged.
  {
    std::ifstream log(acknowledged_log());
    Acknowledged a;
    while (log >> a.key.job_id >> a.key.attempt >> a.key.node >> a.exit_code >> a.signal)
      acknowledged_.push_back(a);
    acknowledged_log_lines_ = acknowledged_.size();
    while (acknowledged_.size() > kRememberedAcknowledged) acknowledged_.pop_front();
  }
  // A task whose shepherd started but whose launch the agent did not live to record.
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(tasks_dir(), ec)) {
    std::string name = entry.path().filename().string();
    if (!name.ends_with(".pid")) continue;
    std::istringstream parts(name.substr(0, name.size() - 4));
    TaskKey key;
    char dot1 = 0, dot2 = 0;
    if (!(parts >> key.job_id >> dot1 >> key.attempt >> dot2) || dot1 != '.' || dot2 != '.')
      continue;
    std::getline(parts, key.node);
    if (key.node.empty() || tasks_.contains(key)) continue;
    Task task;
    task.key = key;
    std::istringstream pids(read_text(entry.path().string()));
    if (!(pids >> task.shepherd >> task.process_group)) continue;
    task.shepherd_start = process_start_time(task.shepherd);
    tasks_[key] = task;
  }
  for (auto& [key, task] : tasks_) check(task);
  return save();
}

Status TaskRunner::save() const {
  json state = {{"version", 1}, {"tasks", json::array()}};
  for (const auto& [key, task] : tasks_) {
    state["tasks"].push_back({{"job", key.job_id},
                              {"attempt", key.attempt},
                              {"node", key.node},
                              {"shepherd", task.shepherd},
                              {"shepherd_start", task.shepherd_start},
                              {"process_group", task.process_group},
                              {"running", task.running},
                              {"exit_code", task.exit_code},
                              {"signal", task.signal}});
  }
  std::string path = options_.state_dir + "/tasks.json";
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << state.dump() << '\n';  // compact: written at every launch and acknowledgement
    if (!out) return fail(Error::Code::kUnavailable, "cannot write " + temporary);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    return fail(Error::Code::kUnavailable, "cannot rename " + temporary + ": " + errno_text());
  }
  return Ok{};
}

bool TaskRunner::check(Task& task) {
  if (!task.running) return false;
  auto ended = [&](int exit_code, int signal) {
    task.running = false;
    task.exit_code = exit_code;
    task.signal = signal;
    if (task.child) {
      // The status file is the shepherd's last act: it is exiting, so this wait is short.
      while (::waitpid(task.shepherd, nullptr, 0) < 0 && errno == EINTR) {
      }
      task.child = false;
    }
    return true;
  };
  int exit_code = 0, signal = 0;
  if (read_exit_file(exit_file(task.key), exit_code, signal)) return ended(exit_code, signal);
  bool shepherd_gone;
  if (task.child) {
    pid_t reaped = ::waitpid(task.shepherd, nullptr, WNOHANG);
    shepherd_gone = reaped == task.shepherd || (reaped < 0 && errno == ECHILD);
    if (shepherd_gone) task.child = false;
  } else {
    shepherd_gone =
        !process_running(task.shepherd) || process_start_time(task.shepherd) != task.shepherd_start;
  }
  if (!shepherd_gone) return false;
  // Its status may have been written between the first look and its exit.
  if (read_exit_file(exit_file(task.key), exit_code, signal)) return ended(exit_code, signal);
  if (task.process_group > 0) ::kill(-task.process_group, SIGKILL);  // nobody watches it now
  return ended(kLostExitCode, 0);
}

void TaskRunner::monitor() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    bool any_ended = false;
    Clock::time_point now = Clock::now();
    for (auto& [key, task] : tasks_) {
      if (task.running && task.kill_at != Clock::time_point{} && now >= task.kill_at) {
        if (task.process_group > 0) ::kill(-task.process_group, SIGKILL);
        task.kill_at = {};
      }
      any_ended |= check(task);
    }
    if (any_ended) {
      (void)save();
      changed_.notify_all();
      if (options_.on_exit) {
        lock.unlock();
        options_.on_exit();
        lock.lock();
      }
    }
    changed_.wait_for(lock, options_.poll_interval);
  }
}

bool TaskRunner::wait_ended(const TaskKey& key, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] {
    auto it = tasks_.find(key);
    return it == tasks_.end() || !it->second.running;
  });
}

Result<bool> TaskRunner::launch(const TaskSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty()) return fail("argv: empty command");
  std::lock_guard launching(launch_mutex_);

  // Known already, or superseded by a later attempt: nothing to do.
  std::vector<TaskKey> older;
  {
    std::lock_guard lock(mutex_);
    if (tasks_.contains(spec.key)) return false;
    auto acknowledged = std::find_if(acknowledged_.begin(), acknowledged_.end(),
                                     [&](const Acknowledged& a) { return a.key == spec.key; });
    if (acknowledged != acknowledged_.end()) {
      // Ended and recorded once, then launched again: a controller lost what it recorded (it
      // restarted mid-job). Its exit is reported again; the task does not run again.
      Task again;
      again.key = spec.key;
      again.running = false;
      again.exit_code = acknowledged->exit_code;
      again.signal = acknowledged->signal;
      tasks_[spec.key] = again;
      acknowledged_.erase(acknowledged);
      (void)save();
      return false;
    }
    auto later = [&](const TaskKey& k) {
      return k.job_id == spec.key.job_id && k.node == spec.key.node && k.attempt > spec.key.attempt;
    };
    if (std::any_of(tasks_.begin(), tasks_.end(), [&](const auto& t) { return later(t.first); }) ||
        std::any_of(acknowledged_.begin(), acknowledged_.end(),
                    [&](const Acknowledged& a) { return later(a.key); })) {
      return false;
    }
    for (auto& [key, task] : tasks_) {
      if (key.job_id == spec.key.job_id && key.node == spec.key.node && task.running) {
        if (task.process_group > 0) ::kill(-task.process_group, SIGKILL);
        older.push_back(key);
      }
    }
  }
  changed_.notify_all();
  for (const TaskKey& key : older) {
    if (!wait_ended(key, kOldAttemptTimeout)) {
      return fail(Error::Code::kUnavailable,
                  "task " + key.name() + " (an older attempt) did not end after SIGKILL");
    }
  }

  Prepared p;
  p.label = "trellis-agent: task " + spec.key.name() + ": ";
  p.argv_storage = spec.argv;
  p.env_storage = spec.env;

  // The user, and the groups that go with them.
  uid_t self = ::geteuid();
  uid_t uid = spec.uid < 0 ? self : static_cast<uid_t>(spec.uid);
  gid_t gid = spec.gid < 0 ? ::getegid() : static_cast<gid_t>(spec.gid);
  std::string home;
  {
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
  p.same_file = p.error == p.output;

  // Where exec looks for argv[0]: itself when it holds a '/', else each directory of the job's
  // PATH.
  const std::string& command = spec.argv[0];
  if (command.find('/') != std::string::npos) {
    p.candidates_storage.push_back(command);
  } else {
    const std::string* path_entry = find_env(spec.env, "PATH");
    std::string path = path_entry ? path_entry->substr(5) : "/usr/local/bin:/usr/bin:/bin";
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
      p.candidates_storage.push_back((dir.empty() ? "." : dir) + "/" + command);
    }
  }
  p.argv = pointers(p.argv_storage);
  p.env = pointers(p.env_storage);
  p.candidates = pointers(p.candidates_storage);
  p.pid_file = pid_file(spec.key);
  p.pid_temporary = p.pid_file + ".tmp";
  p.exit_file = exit_file(spec.key);
  p.exit_temporary = p.exit_file + ".tmp";
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    p.max_fd = static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 20));
  }
  // Leftovers of an earlier life of this key (never acknowledged, then forgotten) must not be
  // mistaken for this run's status.
  ::unlink(p.exit_file.c_str());

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return fail(Error::Code::kUnavailable, "cannot create a pipe: " + errno_text());
  }
  pid_t shepherd = ::fork();
  if (shepherd == 0) {
    ::close(fds[0]);
    run_shepherd(p, fds[1]);
  }
  int fork_error = errno;
  ::close(fds[1]);
  if (shepherd < 0) {
    ::close(fds[0]);
    return fail(Error::Code::kUnavailable,
                "cannot fork: " + std::string(std::strerror(fork_error)));
  }
  pid_t job = -1;
  size_t have = 0;
  while (have < sizeof job) {
    ssize_t n = ::read(fds[0], reinterpret_cast<char*>(&job) + have, sizeof job - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fds[0]);
  if (have < sizeof job || job <= 0) {
    while (::waitpid(shepherd, nullptr, 0) < 0 && errno == EINTR) {
    }
    ::unlink(p.pid_file.c_str());
    return fail(Error::Code::kUnavailable,
                "task " + spec.key.name() + ": the shepherd could not fork the job's process");
  }

  std::lock_guard lock(mutex_);
  Task task;
  task.key = spec.key;
  task.shepherd = shepherd;
  task.shepherd_start = process_start_time(shepherd);
  task.process_group = job;
  task.child = true;
  tasks_[spec.key] = task;
  if (Status saved = save(); !saved) return saved.error();
  return true;
}

int TaskRunner::signal(int64_t job_id, int attempt, int signal, std::chrono::milliseconds grace) {
  int count = 0;
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, task] : tasks_) {
      if (key.job_id != job_id || (attempt != 0 && key.attempt != attempt)) continue;
      if (!task.running || task.process_group <= 0) continue;
      if (::kill(-task.process_group, signal == 0 ? SIGTERM : signal) != 0) continue;
      if (signal == 0) {
        ::kill(-task.process_group, SIGCONT);  // a suspended job must run to see its SIGTERM
        task.kill_at = Clock::now() + grace;
      }
      ++count;
    }
  }
  changed_.notify_all();
  return count;
}

std::vector<TaskInfo> TaskRunner::tasks() const {
  std::lock_guard lock(mutex_);
  std::vector<TaskInfo> out;
  for (const auto& [key, task] : tasks_) {
    out.push_back({key, task.running, task.exit_code, task.signal, task.process_group});
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
  bool changed = false;
  std::string appended;
  for (const TaskKey& key : keys) {
    auto it = tasks_.find(key);
    if (it == tasks_.end() || it->second.running) continue;
    acknowledged_.push_back({key, it->second.exit_code, it->second.signal});
    appended += std::to_string(key.job_id) + " " + std::to_string(key.attempt) + " " + key.node +
                " " + std::to_string(it->second.exit_code) + " " +
                std::to_string(it->second.signal) + "\n";
    tasks_.erase(it);
    ::unlink(pid_file(key).c_str());
    ::unlink(exit_file(key).c_str());
    if (acknowledged_.size() > kRememberedAcknowledged) acknowledged_.pop_front();
    changed = true;
  }
  if (!changed) return;
  // The acknowledged exits go to a log of their own, appended to, so that the state file
  // rewritten at every launch stays as small as the tasks that run. The log is rewritten from
  // memory when it holds twice what is remembered.
  acknowledged_log_lines_ +=
      static_cast<size_t>(std::count(appended.begin(), appended.end(), '\n'));
  if (acknowledged_log_lines_ > 2 * kRememberedAcknowledged) {
    std::string all;
    for (const Acknowledged& a : acknowledged_)
      all += std::to_string(a.key.job_id) + " " + std::to_string(a.key.attempt) + " " + a.key.node +
             " " + std::to_string(a.exit_code) + " " + std::to_string(a.signal) + "\n";
    std::string temporary = acknowledged_log() + ".tmp";
    std::ofstream(temporary, std::ios::trunc) << all;
    if (::rename(temporary.c_str(), acknowledged_log().c_str()) == 0)
      acknowledged_log_lines_ = acknowledged_.size();
  } else {
    std::ofstream(acknowledged_log(), std::ios::app) << appended;
  }
  (void)save();
}

}  // namespace trellis
