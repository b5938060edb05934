#include "daemon/job_activity.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "daemon/proc_stat.h"
#include "runtime/area_layout.h"

namespace trellis {
namespace {

static_assert(std::is_standard_layout_v<trellis_area> &&
                  std::is_standard_layout_v<trellis_area_slot>,
              "the runtime area is read by offsets");

// A field of the area's image: the atomics are plain integers in memory (area_layout.h).
template <typename T>
T field_at(const unsigned char* image, size_t offset) {
  T value;
  std::memcpy(&value, image + offset, sizeof value);
  return value;
}

// Whether a process in this state (or one of its threads) can be running: anything but asleep,
// stopped or dead. Unknown states count as runnable, so that they are never taken for idle.
bool runnable(char state) {
  switch (state) {
    case 'S':  // sleeping (also a task frozen by the v2 cgroup freezer)
    case 'D':  // uninterruptible sleep (also the v1 cgroup freezer)
    case 'I':  // idle (TASK_IDLE)
    case 'P':  // parked
    case 'T':  // stopped (SIGSTOP)
    case 't':  // stopped by a tracer
    case 'Z':
    case 'X':
    case 'x':
      return false;
    default:
      return true;
  }
}

bool dead(char state) {
  return state == 'Z' || state == 'X' || state == 'x';
}

bool any_thread_runnable(const ProcStat& process) {
  if (process.threads <= 1) return runnable(process.state);
  for (const ProcStat& thread : read_thread_stats(process.pid))
    if (runnable(thread.state)) return true;
  return false;
}

// The user owning the process (its effective uid, as /proc shows it); -1 when it is gone.
long long process_owner(pid_t pid) {
  struct stat st;
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return -1;
  return st.st_uid;
}

// A process's announcements, from every slot registered with its pid and start time.
struct Announced {
  bool message = false;
  bool input = false;
};

const char kHex[] = "0123456789ABCDEF";

}  // namespace

GlobalState global_state(const std::vector<TaskActivity>& tasks) {
  bool any = false, all_messages = true, any_input = false;
  for (const TaskActivity& task : tasks) {
    if (task.processes == 0) continue;
    any = true;
    if (task.running > 0) return GlobalState::kRunning;
    all_messages = all_messages && task.waiting_for_messages();
    any_input = any_input || task.waiting_input > 0;
  }
  if (!any) return GlobalState::kRunning;
  if (all_messages) return GlobalState::kStopped;
  return any_input ? GlobalState::kIdle : GlobalState::kRunning;
}

TaskActivity ActivityMonitor::sample(const std::string& task, pid_t process_group,
                                     const std::string& area_name) {
  return sample(task, processes_in_group(process_group), area_name);
}

TaskActivity ActivityMonitor::sample(const std::string& task, const std::vector<pid_t>& pids,
                                     const std::string& area_name) {
  std::vector<pid_t> sorted = pids;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::vector<ProcStat> stats;
  for (pid_t pid : sorted)
    if (Result<ProcStat> stat = read_proc_stat(pid)) stats.push_back(std::move(*stat));
  return sample(task, std::move(stats), area_name);
}

TaskActivity ActivityMonitor::sample(const std::string& task, std::vector<ProcStat> stats,
                                     const std::string& area_name) {
  // Announcements by (pid, start time); slots of dead processes and of reused pids never match
  // a live process below.
  std::map<std::pair<pid_t, long long>, Announced> announced;
  long long area_owner = -1;
  // (The segment's file in /dev/shm is the name without its leading '/'.)
  const std::string file =
      area_name.substr(std::min(area_name.find_first_not_of('/'), area_name.size()));
  uint64_t mark = 0;
  if (!area_name.empty() && !absent_areas_.known_missing(file, &mark)) {
    Result<RuntimeArea> area = read_runtime_area(area_name);
    if (!area && area.error().code == Error::Code::kNotFound) absent_areas_.missing(file, mark);
    if (area) {
      area_owner = area->owner;
      for (const RuntimeSlot& slot : area->slots) {
        if (slot.start_time == 0) continue;  // cannot be told from a later process with its pid
        Announced& entry = announced[{slot.pid, slot.start_time}];
        entry.message = entry.message || slot.message_waits > 0;
        entry.input = entry.input || slot.input_waits > 0;
      }
    }
  }

  std::map<pid_t, Seen> previous;
  {
    std::lock_guard lock(mutex_);
    auto it = seen_.find(task);
    if (it != seen_.end()) previous = it->second;
  }

  TaskActivity activity;
  std::map<pid_t, Seen> now;
  std::sort(stats.begin(), stats.end(),
            [](const ProcStat& a, const ProcStat& b) { return a.pid < b.pid; });
  stats.erase(std::unique(stats.begin(), stats.end(),
                          [](const ProcStat& a, const ProcStat& b) { return a.pid == b.pid; }),
              stats.end());
  for (const ProcStat& stat : stats) {
    const pid_t pid = stat.pid;
    if (dead(stat.state)) continue;
    ++activity.processes;
    now[pid] = Seen{stat.start_time, stat.cpu_ticks};
    auto before = previous.find(pid);
    bool seen_before = before != previous.end() && before->second.start_time == stat.start_time;
    long long used =
        seen_before ? std::max(0LL, stat.cpu_ticks - before->second.cpu_ticks) : stat.cpu_ticks;
    activity.cpu_ticks += used;

    auto slot = announced.find({pid, stat.start_time});
    // A segment another user could write is believed only about that user's processes.
    if (slot != announced.end() && process_owner(pid) == area_owner) {
      activity.from_runtime = true;
      if (slot->second.input) {  // input first: the outside world can wake it
        ++activity.waiting_input;
        continue;
      }
      if (slot->second.message) {
        ++activity.waiting_message;
        continue;
      }
    }
    if (!seen_before || used > 0 || any_thread_runnable(stat)) {
      ++activity.running;
    } else {
      ++activity.waiting_input;
    }
  }

  std::lock_guard lock(mutex_);
  seen_[task] = std::move(now);
  return activity;
}

void ActivityMonitor::forget(const std::string& task) {
  std::lock_guard lock(mutex_);
  seen_.erase(task);
}

std::string runtime_area_name(int64_t job, int attempt, const std::string& node) {
  std::string escaped;
  for (char c : node) {
    unsigned char byte = static_cast<unsigned char>(c);
    if ((byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
        (byte >= '0' && byte <= '9') || byte == '.' || byte == '-') {
      escaped += c;
    } else {
      escaped += '_';
      escaped += kHex[byte >> 4];
      escaped += kHex[byte & 0xF];
    }
  }
  // NAME_MAX is 255; keep well below it with a stable hash (FNV-1a) of the whole node name.
  if (escaped.size() > 160) {
    uint64_t hash = 14695981039346656037ull;
    for (char c : node) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    escaped.resize(120);
    escaped += '~';
    for (int shift = 60; shift >= 0; shift -= 4) escaped += kHex[(hash >> shift) & 0xF];
  }
  return "/trellis-" + std::to_string(job) + "." + std::to_string(attempt) + "." + escaped;
}

Status remove_runtime_area(const std::string& name) {
  if (name.empty() || ::shm_unlink(name.c_str()) == 0 || errno == ENOENT) return Ok{};
  return fail(Error::Code::kUnavailable,
              "cannot remove the runtime area " + name + ": " + std::strerror(errno));
}

Result<RuntimeArea> read_runtime_area(const std::string& name) {
  // Read-only and non-blocking: the job's user made this name and could have put a FIFO there
  // (glibc's shm_open adds O_NOFOLLOW, so a symbolic link fails to open).
  int fd = ::shm_open(name.c_str(), O_RDONLY | O_NONBLOCK, 0);
  if (fd < 0) {
    int error = errno;
    return fail(error == ENOENT ? Error::Code::kNotFound : Error::Code::kUnavailable,
                "cannot open the runtime area " + name + ": " + std::strerror(error));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != TRELLIS_AREA_SIZE) {
    ::close(fd);
    return fail("the runtime area " + name + " is not a runtime area of this version (" +
                std::to_string(TRELLIS_AREA_SIZE) + " bytes)");
  }
  // One copy. Taken while the task is frozen it is exact: nothing writes the area meanwhile, and
  // the freeze (a signal or the cgroup freezer) has made every store of the frozen processes
  // visible. Taken while they run, each counter is some value it recently had.
  alignas(8) std::array<unsigned char, TRELLIS_AREA_SIZE> image{};
  size_t have = 0;
  int error = 0;
  while (have < image.size()) {
    ssize_t n = ::pread(fd, image.data() + have, image.size() - have, static_cast<off_t>(have));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    have += static_cast<size_t>(n);
  }
  ::close(fd);
  if (error != 0)
    return fail(Error::Code::kUnavailable,
                "cannot read the runtime area " + name + ": " + std::strerror(error));
  if (have < image.size()) return fail("the runtime area " + name + " shrank while being read");

  const unsigned char* bytes = image.data();
  if (field_at<uint32_t>(bytes, offsetof(trellis_area, magic)) != TRELLIS_AREA_MAGIC ||
      field_at<uint32_t>(bytes, offsetof(trellis_area, version)) != TRELLIS_AREA_VERSION ||
      field_at<uint32_t>(bytes, offsetof(trellis_area, slot_count)) != TRELLIS_AREA_SLOTS ||
      field_at<uint32_t>(bytes, offsetof(trellis_area, slot_size)) != sizeof(trellis_area_slot))
    return fail("the runtime area " + name + " has another magic number, version or layout");

  RuntimeArea area;
  area.owner = st.st_uid;
  for (size_t i = 0; i < TRELLIS_AREA_SLOTS; ++i) {
    size_t at = offsetof(trellis_area, slots) + i * sizeof(trellis_area_slot);
    RuntimeSlot slot;
    slot.pid = field_at<int32_t>(bytes, at + offsetof(trellis_area_slot, pid));
    if (slot.pid <= 0) continue;  // free, or being claimed
    slot.start_time = field_at<int64_t>(bytes, at + offsetof(trellis_area_slot, start_time));
    slot.message_waits =
        std::max(0, field_at<int32_t>(bytes, at + offsetof(trellis_area_slot, message_waits)));
    slot.input_waits =
        std::max(0, field_at<int32_t>(bytes, at + offsetof(trellis_area_slot, input_waits)));
    area.slots.push_back(slot);
  }
  return area;
}

}  // namespace trellis
