#include "daemon/freezer.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "daemon/cgroup_files.h"
#include "daemon/proc_stat.h"

namespace trellis {
namespace {

using namespace cgroup_files;  // NOLINT

// Reads cgroup v2's cgroup.events from `fd` (from its start).
bool events_say_frozen(int fd) {
  char buffer[256];
  ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return false;
  buffer[n] = '\0';
  return std::strstr(buffer, "frozen 1") != nullptr;
}

// Writes `text` to the open control file `fd` (from its start); false, with errno, if it could
// not.
bool write_open_control(int fd, std::string_view text) {
  return ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
}

// The agent's cgroup directory for `method`, made and checked; "" when that method cannot work.
std::string try_root(FreezeMethod method, const std::string& name) {
  std::string mount = method == FreezeMethod::kCgroupV2 ? mount_point("cgroup2", "")
                                                        : mount_point("cgroup", "freezer");
  if (mount.empty()) return "";
  std::string own = own_cgroup(method == FreezeMethod::kCgroupV2 ? "" : "freezer");
  if (own.empty() || own.find("..") != std::string::npos) return "";
  if (own == "/") own.clear();
  std::string root = mount + own + "/trellis-" + name;
  if (!make_directory(root)) return "";
  // The hierarchy must have the freezer: cgroup.freeze (kernel 5.2+) or freezer.state.
  std::string control = method == FreezeMethod::kCgroupV2 ? "/cgroup.freeze" : "/freezer.state";
  // The root cgroup of v1 has no freezer.state; a child always has. Probe with a child.
  std::string probe = root + "/probe";
  bool usable = make_directory(probe) && file_exists(probe + control);
  ::rmdir(probe.c_str());
  return usable ? root : "";
}

// Sleeps a little longer each time it is called: a freeze is usually seen within microseconds,
// and a process that takes longer should not be polled in a tight loop.
class Backoff {
 public:
  void wait() {
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    delay_us_ = std::min(delay_us_ * 2, 5000);
  }

 private:
  int delay_us_ = 20;
};

}  // namespace

std::string_view freeze_method_name(FreezeMethod method) {
  switch (method) {
    case FreezeMethod::kCgroupV2:
      return "cgroup-v2";
    case FreezeMethod::kCgroupV1:
      return "cgroup-v1";
    case FreezeMethod::kSignals:
      return "signals";
  }
  return "?";
}

bool process_group_stopped(pid_t process_group) {
  for (pid_t pid : processes_in_group(process_group)) {
    std::string tasks = "/proc/" + std::to_string(pid) + "/task";
    DIR* dir = ::opendir(tasks.c_str());
    if (dir == nullptr) continue;  // gone since the scan
    bool stopped = true;
    while (dirent* entry = ::readdir(dir)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      Result<ProcStat> thread = read_proc_stat(std::atoi(entry->d_name));
      if (!thread) continue;  // the thread ended
      char state = thread->state;
      if (state != 'T' && state != 't' && state != 'Z' && state != 'X') {
        stopped = false;
        break;
      }
    }
    ::closedir(dir);
    if (!stopped) return false;
  }
  return true;
}

Freezer Freezer::open(Options options) {
  std::string name;
  for (char c : options.name)  // a path component, whatever the caller's name holds
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  if (name.empty()) name = "agent";
  options.name = name;
  if (!options.force_signals) {
    for (FreezeMethod method : {FreezeMethod::kCgroupV2, FreezeMethod::kCgroupV1}) {
      std::string root = try_root(method, name);
      if (!root.empty()) return Freezer(method, std::move(root), std::move(options));
    }
  }
  return Freezer(FreezeMethod::kSignals, "", std::move(options));
}

std::string Freezer::group_dir(std::string_view group) const {
  std::string name;
  for (char c : group) name += c == '/' || c == '\0' ? '_' : c;
  if (name == "." || name == ".." || name == "probe") name = "_" + name;
  return root_ + "/" + name;
}

Freezer::Files::~Files() {
  for (int fd : {state, events, procs})
    if (fd >= 0) ::close(fd);
}

std::shared_ptr<Freezer::Files> Freezer::files_of(const std::string& dir) const {
  std::lock_guard lock(made_->mutex);
  auto it = made_->dirs.find(dir);
  return it == made_->dirs.end() ? nullptr : it->second;
}

Result<std::string> Freezer::prepare(std::string_view group) {
  if (method_ == FreezeMethod::kSignals) return std::string();
  std::string dir = group_dir(group);
  if (files_of(dir)) return dir + "/cgroup.procs";
  if (!make_directory(dir))
    return fail("cannot make the freezer cgroup " + dir + ": " + std::strerror(errno));
  const bool v2 = method_ == FreezeMethod::kCgroupV2;
  auto files = std::make_shared<Files>();
  files->state =
      ::open((dir + (v2 ? "/cgroup.freeze" : "/freezer.state")).c_str(), O_RDWR | O_CLOEXEC);
  if (v2) files->events = ::open((dir + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC);
  files->procs = ::open((dir + "/cgroup.procs").c_str(), O_RDONLY | O_CLOEXEC);
  std::lock_guard lock(made_->mutex);
  made_->dirs.emplace(dir, std::move(files));  // another thread's, if it was first, is kept
  return dir + "/cgroup.procs";
}

Status Freezer::freeze(std::string_view group, const std::vector<pid_t>& process_groups) {
  if (method_ == FreezeMethod::kSignals) return freeze_by_signals(group, process_groups);
  Result<std::string> procs = prepare(group);
  if (!procs) return procs.error();
  std::string dir = group_dir(group);
  std::shared_ptr<Files> files = files_of(dir);
  const bool v2 = method_ == FreezeMethod::kCgroupV2;
  const std::string_view frozen = v2 ? "1" : "FROZEN";
  if (!files || files->state < 0 || !write_open_control(files->state, frozen)) {
    // (No kept file, or it failed: by the path, which names the file in an error.)
    if (Status ok = write_control(dir + (v2 ? "/cgroup.freeze" : "/freezer.state"), frozen); !ok)
      return ok;
  }
  auto give_up = std::chrono::steady_clock::now() + options_.confirm_timeout;
  auto too_long = [&] {
    return fail(Error::Code::kUnavailable,
                "job " + std::string(group) + ": its cgroup " + dir + " did not freeze within " +
                    std::to_string(options_.confirm_timeout.count()) + " ms");
  };
  if (v2) {
    // Read, then wait for the file's change notice or a timeout, and read again. The notice
    // usually ends the wait as the group becomes frozen (one wake-up instead of one per poll);
    // the kernel holds a notice back until 10 ms after the file's previous one (a group thawed
    // less than 10 ms ago), and the timeouts, growing from 50 us, take over then.
    int fd = files && files->events >= 0
                 ? files->events
                 : ::open((dir + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("cannot open " + dir + "/cgroup.events: " + std::strerror(errno));
    auto done = [&](Status status) {
      if (!files || fd != files->events) ::close(fd);
      return status;
    };
    long wait_us = 50;
    while (!events_say_frozen(fd)) {
      if (std::chrono::steady_clock::now() > give_up) return done(too_long());
      pollfd change{fd, POLLPRI, 0};
      timespec timeout{0, wait_us * 1000};
      (void)::ppoll(&change, 1, &timeout, nullptr);
      wait_us = std::min(wait_us * 2, 5000L);
    }
    return done(Ok{});
  }
  // Reading freezer.state also moves a FREEZING cgroup on.
  Backoff backoff;
  while (read_small_file(dir + "/freezer.state").rfind("FROZEN", 0) != 0) {
    if (std::chrono::steady_clock::now() > give_up) return too_long();
    backoff.wait();
  }
  return Ok{};
}

Status Freezer::freeze_by_signals(std::string_view group,
                                  const std::vector<pid_t>& process_groups) {
  // All are sent their SIGSTOP before any is watched: the tasks stop together.
  for (pid_t process_group : process_groups) {
    if (process_group <= 0) continue;  // not started: the agent stops it when it starts
    if (::kill(-process_group, SIGSTOP) != 0 && errno != ESRCH)
      return fail("job " + std::string(group) + ": SIGSTOP to process group " +
                  std::to_string(process_group) + ": " + std::strerror(errno));
  }
  auto give_up = std::chrono::steady_clock::now() + options_.confirm_timeout;
  for (pid_t process_group : process_groups) {
    Backoff backoff;
    while (process_group > 0 && !process_group_stopped(process_group)) {
      if (std::chrono::steady_clock::now() > give_up)
        return fail(Error::Code::kUnavailable,
                    "job " + std::string(group) + ": process group " +
                        std::to_string(process_group) + " was not seen stopped within " +
                        std::to_string(options_.confirm_timeout.count()) + " ms");
      backoff.wait();
    }
  }
  return Ok{};
}

Status Freezer::thaw(std::string_view group, const std::vector<pid_t>& process_groups) {
  if (method_ == FreezeMethod::kSignals) {
    for (pid_t process_group : process_groups) {
      if (process_group > 0 && ::kill(-process_group, SIGCONT) != 0 && errno != ESRCH)
        return fail("job " + std::string(group) + ": SIGCONT to process group " +
                    std::to_string(process_group) + ": " + std::strerror(errno));
    }
    return Ok{};
  }
  std::string dir = group_dir(group);
  const bool v2 = method_ == FreezeMethod::kCgroupV2;
  const std::string_view thawed = v2 ? "0" : "THAWED";
  if (std::shared_ptr<Files> files = files_of(dir);
      files && files->state >= 0 && write_open_control(files->state, thawed))
    return Ok{};
  if (!file_exists(dir)) return Ok{};  // never frozen
  return write_control(dir + (v2 ? "/cgroup.freeze" : "/freezer.state"), thawed);
}

std::optional<std::vector<pid_t>> Freezer::processes(std::string_view group) const {
  if (method_ == FreezeMethod::kSignals) return std::nullopt;
  // Plain reads, from the file kept open when there is one: every gang switch reads this for
  // every frozen or probed job. (Reading from the start lists the cgroup afresh.)
  const std::string dir = group_dir(group);
  std::shared_ptr<Files> files = files_of(dir);
  const bool kept = files && files->procs >= 0;
  int fd = kept ? files->procs : ::open((dir + "/cgroup.procs").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(text.size()))) > 0;) {
    text.append(buffer, static_cast<size_t>(n));
    // A read ends at a whole line, and stops short of the buffer's end only at the list's end
    // (by more than a line's length: a pid's line is at most 8 bytes).
    if (static_cast<size_t>(n) + 16 < sizeof buffer) break;
  }
  if (!kept) ::close(fd);
  std::vector<pid_t> pids;
  const char* at = text.c_str();
  while (*at != '\0') {
    char* end = nullptr;
    long pid = std::strtol(at, &end, 10);
    if (end == at) break;
    pids.push_back(static_cast<pid_t>(pid));
    at = end;
  }
  return pids;
}

namespace {

// Removes the cgroups under `root` that have no process left, then `root` if that emptied it.
void remove_unpopulated(const std::string& root) {
  // The groups with no process left first (tasks that ended unacknowledged); a group whose
  // processes still run stays, frozen or not, and so does the root.
  if (DIR* dir = ::opendir(root.c_str())) {
    std::vector<std::string> groups;
    while (dirent* entry = ::readdir(dir))
      if (entry->d_type == DT_DIR && entry->d_name[0] != '.') groups.push_back(entry->d_name);
    ::closedir(dir);
    for (const std::string& group : groups) ::rmdir((root + "/" + group).c_str());
  }
  ::rmdir(root.c_str());
}

}  // namespace

void Freezer::remove_root() {
  if (root_.empty()) return;
  {
    std::lock_guard lock(made_->mutex);
    made_->dirs.clear();
  }
  remove_unpopulated(root_);
}

bool Freezer::remove_agent_cgroup(const std::string& root) {
  const std::string_view mount = "/sys/fs/cgroup/";
  const size_t name_at = root.rfind('/');
  if (!root.starts_with(mount) || root.find("..") != std::string::npos ||
      name_at == std::string::npos || root.compare(name_at + 1, 8, "trellis-") != 0)
    return false;
  remove_unpopulated(root);
  return !file_exists(root);
}

int Freezer::remove(std::string_view group) {
  if (method_ == FreezeMethod::kSignals) return 0;
  std::string dir = group_dir(group);
  {
    std::lock_guard lock(made_->mutex);
    made_->dirs.erase(dir);
  }
  if (!file_exists(dir)) return 0;
  (void)thaw(group, {});
  // Every task of the group has ended, so what is still in its cgroup left its task's process
  // group (setsid, a daemon) and would outlive the job: it is killed, as Slurm's cgroup plugin
  // does at a step's end. cgroup.kill (Linux 5.14) kills forks in flight too; without it each
  // process is sent SIGKILL, again while new ones appear.
  std::optional<std::vector<pid_t>> left = processes(group);
  const int killed = left ? static_cast<int>(left->size()) : 0;
  const bool kill_file = method_ == FreezeMethod::kCgroupV2 && file_exists(dir + "/cgroup.kill");
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (left && !left->empty() && std::chrono::steady_clock::now() < give_up) {
    if (kill_file) {
      (void)write_control(dir + "/cgroup.kill", "1");
    } else {
      for (pid_t pid : *left) ::kill(pid, SIGKILL);
    }
    // rmdir refuses the cgroup until the kernel has taken the killed processes out of it.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    left = processes(group);
  }
  ::rmdir(dir.c_str());
  return killed;
}

}  // namespace trellis
