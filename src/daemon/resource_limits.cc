#include "daemon/resource_limits.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>
#include <thread>
#include <utility>

#include "core/id_ranges.h"
#include "daemon/cgroup_files.h"
#include "daemon/device_program.h"

namespace trellis {
namespace {

using namespace cgroup_files;  // NOLINT

// The v1 hierarchies, in roots_'s order.
constexpr const char* kV1Controllers[] = {"cpuset", "memory", "devices"};
constexpr size_t kCpuset = 0, kMemory = 1, kDevices = 2;
// A removal waits this long in all for the group's last processes to go.
constexpr int kRemoveAttempts = 50;
constexpr auto kRemovePause = std::chrono::milliseconds(10);

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// The value of `key` in a flat keyed file ("oom_kill 3\n..."); -1 when absent.
int64_t keyed_value(const std::string& text, std::string_view key) {
  std::istringstream in(text);
  std::string name;
  int64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return -1;
}

int64_t number_in(const std::string& path) {
  std::string text = trimmed(read_small_file(path));
  if (text.empty()) return -1;
  try {
    return std::stoll(text);
  } catch (...) {
    return -1;
  }
}

// Writes an id list and reads it back as a set: the kernel may write it differently ("0,1" is
// "0-1") but must hold the same ids.
Status write_ids(const std::string& path, const std::vector<int>& ids) {
  std::string text = format_id_ranges(std::vector<int64_t>(ids.begin(), ids.end()));
  if (Status ok = write_control(path, text); !ok) return ok;
  std::string back = trimmed(read_small_file(path));
  Result<std::vector<int>> read = parse_id_ranges(back);
  Result<std::vector<int>> wanted = parse_id_ranges(text);
  if (!read || !wanted || *read != *wanted)
    return fail(path + " says '" + back + "' after '" + text + "' was written to it");
  return Ok{};
}

// Writes a byte count and reads it back (the kernel rounds down to its page size).
Status write_bytes(const std::string& path, int64_t bytes) {
  if (Status ok = write_control(path, std::to_string(bytes)); !ok) return ok;
  int64_t back = number_in(path);
  if (back < 0 || back > bytes || bytes - back >= 65536)
    return fail(path + " says '" + trimmed(read_small_file(path)) + "' after " +
                std::to_string(bytes) + " was written to it");
  return Ok{};
}

// A child cgroup of v1's cpuset starts with no CPUs and no memory nodes: what its parent has.
Status inherit_cpuset(const std::string& parent, const std::string& dir) {
  for (const char* file : {"cpuset.cpus", "cpuset.mems"}) {
    if (!trimmed(read_small_file(dir + "/" + file)).empty()) continue;
    std::string from = trimmed(read_small_file(parent + "/" + file));
    if (from.empty()) return fail(parent + "/" + file + " is empty: nothing to give " + dir);
    if (Status ok = write_control(dir + "/" + file, from); !ok) return ok;
  }
  return Ok{};
}

std::string parent_of(const std::string& dir) {
  return dir.substr(0, dir.rfind('/'));
}

}  // namespace

Result<DeviceNumber> device_number(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return fail(path + ": " + std::strerror(errno));
  if (!S_ISCHR(info.st_mode) && !S_ISBLK(info.st_mode)) return fail(path + " is not a device");
  return DeviceNumber{S_ISCHR(info.st_mode) ? 'c' : 'b', major(info.st_rdev), minor(info.st_rdev)};
}

ResourceLimits ResourceLimits::open(Options options) {
  ResourceLimits out;
  out.probe_devices_ = options.probe_devices;
  const std::string leaf = "/trellis-" + options.name;
  const bool given = !options.v2_mount.empty() || !options.v1_mount.empty();
  std::string why_not;
  // v2 first: the unified hierarchy with cpuset and memory available to this process's cgroup.
  std::string v2 = given ? options.v2_mount : mount_point("cgroup2", "");
  if (!v2.empty()) {
    std::string own = given ? "" : own_cgroup("");
    if (own == "/") own.clear();
    const std::string parent = v2 + own;
    std::string controllers = read_small_file(parent + "/cgroup.controllers");
    if (controllers.find("cpuset") != std::string::npos &&
        controllers.find("memory") != std::string::npos) {
      const std::string root = parent + leaf;
      // A cgroup with processes of its own cannot hand controllers to children (except the
      // root): the agent must then run in a leaf of its own service's cgroup.
      Status enabled = write_control(parent + "/cgroup.subtree_control", "+cpuset +memory");
      if (enabled && !make_directory(root))
        enabled = fail("cannot make " + root + ": " + std::strerror(errno));
      if (enabled) enabled = write_control(root + "/cgroup.subtree_control", "+cpuset +memory");
      if (enabled) {
        out.kind_ = Kind::kCgroupV2;
        out.roots_ = {root};
        out.description_ = "cgroup-v2 (cpuset, memory) at " + root;
        return out;
      }
      ::rmdir(root.c_str());  // nothing of this agent's is left where it cannot work
      why_not = "cgroup-v2 at " + parent + " cannot hand cpuset and memory to " + root + ": " +
                enabled.error().message + "; ";
    } else {
      why_not = "cgroup-v2 at " + parent + " has no cpuset and memory controllers; ";
    }
  }
  // v1: a hierarchy per controller.
  std::vector<std::string> roots;
  std::string missing;
  for (const char* controller : kV1Controllers) {
    std::string mount =
        given ? options.v1_mount + "/" + controller : mount_point("cgroup", controller);
    std::string own = given ? "" : own_cgroup(controller);
    if (own == "/") own.clear();
    const std::string root = mount + own + leaf;
    std::string probe = std::string(controller) == "cpuset"   ? "/cpuset.cpus"
                        : std::string(controller) == "memory" ? "/memory.limit_in_bytes"
                                                              : "/devices.deny";
    if (mount.empty() || own.find("..") != std::string::npos || !make_directory(root) ||
        !file_exists(root + probe)) {
      missing += (missing.empty() ? "" : ", ") + std::string(controller);
      continue;
    }
    if (std::string(controller) == "cpuset")
      if (Status ok = inherit_cpuset(parent_of(root), root); !ok) {
        missing +=
            (missing.empty() ? "" : ", ") + std::string("cpuset (") + ok.error().message + ")";
        continue;
      }
    roots.push_back(root);
  }
  if (missing.empty()) {
    out.kind_ = Kind::kCgroupV1;
    out.roots_ = std::move(roots);
    out.description_ = "cgroup-v1 (cpuset, memory, devices) under " + parent_of(out.roots_[0]) +
                       " and its siblings";
    return out;
  }
  for (const std::string& root : roots) ::rmdir(root.c_str());
  out.description_ = "none (" + why_not + "cgroup-v1 lacks " + missing +
                     "): jobs cannot be held to cores, memory or devices";
  return out;
}

std::string ResourceLimits::dir(size_t i, std::string_view group) const {
  return roots_[i] + "/" + std::string(group);
}

Result<std::vector<std::string>> ResourceLimits::apply(std::string_view group,
                                                       const NodeLimits& limits) {
  if (group.empty() || group.find('/') != std::string_view::npos || group == "." || group == "..")
    return fail("group '" + std::string(group) + "' is not a cgroup name");
  Status applied = Ok{};
  switch (kind_) {
    case Kind::kNone:
      return fail(Error::Code::kUnavailable, "no cgroup controllers: " + description_);
    case Kind::kCgroupV1:
      applied = apply_v1(group, limits);
      break;
    case Kind::kCgroupV2:
      applied = apply_v2(group, limits);
      break;
  }
  if (!applied) return applied.error();
  if (Status ok = check_denied(group, limits); !ok) return ok.error();
  std::vector<std::string> procs;
  for (size_t i = 0; i < roots_.size(); ++i) procs.push_back(dir(i, group) + "/cgroup.procs");
  return procs;
}

Status ResourceLimits::apply_v1(std::string_view group, const NodeLimits& limits) {
  const std::string cpuset = dir(kCpuset, group);
  if (!make_directory(cpuset)) return fail("cannot make " + cpuset + ": " + std::strerror(errno));
  if (Status ok = inherit_cpuset(roots_[kCpuset], cpuset); !ok) return ok;
  if (!limits.memory_nodes.empty())
    if (Status ok = write_ids(cpuset + "/cpuset.mems", limits.memory_nodes); !ok) return ok;
  if (!limits.cpus.empty())
    if (Status ok = write_ids(cpuset + "/cpuset.cpus", limits.cpus); !ok) return ok;

  const std::string memory = dir(kMemory, group);
  if (!make_directory(memory)) return fail("cannot make " + memory + ": " + std::strerror(errno));
  if (limits.memory_bytes > 0) {
    // With swap accounting, memsw (memory + swap) must not be below the memory limit: raise it
    // first when the limit goes up, lower it after when it goes down.
    const std::string memsw = memory + "/memory.memsw.limit_in_bytes";
    const bool swap_counted = file_exists(memsw);
    Status limited = write_bytes(memory + "/memory.limit_in_bytes", limits.memory_bytes);
    if (!limited && swap_counted) {
      if (Status ok = write_bytes(memsw, limits.memory_bytes); !ok) return ok;
      limited = write_bytes(memory + "/memory.limit_in_bytes", limits.memory_bytes);
    }
    if (!limited) return limited;
    if (swap_counted)
      if (Status ok = write_bytes(memsw, limits.memory_bytes); !ok) return ok;
  }

  const std::string devices = dir(kDevices, group);
  if (!make_directory(devices)) return fail("cannot make " + devices + ": " + std::strerror(errno));
  for (const DeniedDevice& d : limits.denied_devices) {
    std::string rule = std::string(1, d.number.type) + " " + std::to_string(d.number.major) + ":" +
                       std::to_string(d.number.minor) + " rwm";
    if (Status ok = write_control(devices + "/devices.deny", rule); !ok) return ok;
  }
  return Ok{};
}

Status ResourceLimits::apply_v2(std::string_view group, const NodeLimits& limits) {
  const std::string group_dir = dir(0, group);
  if (!make_directory(group_dir))
    return fail("cannot make " + group_dir + ": " + std::strerror(errno));
  if (!limits.memory_nodes.empty())
    if (Status ok = write_ids(group_dir + "/cpuset.mems", limits.memory_nodes); !ok) return ok;
  if (!limits.cpus.empty())
    if (Status ok = write_ids(group_dir + "/cpuset.cpus", limits.cpus); !ok) return ok;
  if (limits.memory_bytes > 0) {
    if (Status ok = write_bytes(group_dir + "/memory.max", limits.memory_bytes); !ok) return ok;
    // The limit is on memory, not on what swapping could add; and an OOM kill ends the whole
    // group (every task of the job on this node), as Slurm's OOMKillStep.
    if (file_exists(group_dir + "/memory.swap.max"))
      if (Status ok = write_control(group_dir + "/memory.swap.max", "0"); !ok) return ok;
    if (file_exists(group_dir + "/memory.oom.group"))
      if (Status ok = write_control(group_dir + "/memory.oom.group", "1"); !ok) return ok;
  }
  // Devices: v2 has no devices.deny; a BPF program attached to the group refuses them.
  if (!limits.denied_devices.empty()) {
    std::vector<DeviceNumber> numbers;
    for (const DeniedDevice& d : limits.denied_devices) numbers.push_back(d.number);
    if (Status ok = attach_device_program(group_dir, device_deny_program(numbers)); !ok)
      return fail(Error::Code::kUnavailable, ok.error().message);
  }
  return Ok{};
}

Status ResourceLimits::check_denied(std::string_view group, const NodeLimits& limits) const {
  if (!probe_devices_ || limits.denied_devices.empty() || kind_ == Kind::kNone) return Ok{};
  const std::string procs =
      (kind_ == Kind::kCgroupV1 ? dir(kDevices, group) : dir(0, group)) + "/cgroup.procs";
  for (const DeniedDevice& d : limits.denied_devices) {
    // Only async-signal-safe calls in the child (the agent has threads).
    const pid_t pid = ::fork();
    if (pid < 0) return fail(std::string("cannot fork a device probe: ") + std::strerror(errno));
    if (pid == 0) {
      char self[24];
      int length = 0;
      for (pid_t p = ::getpid(); p > 0 && length < 20; p /= 10)
        self[length++] = static_cast<char>('0' + p % 10);
      for (int i = 0; i < length / 2; ++i) std::swap(self[i], self[length - 1 - i]);
      int join = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (join < 0 || ::write(join, self, static_cast<size_t>(length)) != length) ::_exit(3);
      int fd = ::open(d.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      ::_exit(fd >= 0 ? 1 : errno == EPERM ? 0 : 2);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 1)
      return fail(d.path + " can still be opened from " + dir(kDevices, group) +
                  " after its devices.deny");
    if (code == 3) return fail("a device probe cannot join " + procs);
    // 2: another error than EPERM (the device is gone, say): not a device this group can use.
  }
  return Ok{};
}

ResourceLimits::MemoryReport ResourceLimits::memory_report(std::string_view group) const {
  MemoryReport report;
  if (kind_ == Kind::kCgroupV2) {
    const std::string d = dir(0, group);
    report.peak_bytes = number_in(d + "/memory.peak");
    report.limit_bytes = std::max<int64_t>(0, number_in(d + "/memory.max"));
    report.oom_kills =
        std::max<int64_t>(0, keyed_value(read_small_file(d + "/memory.events"), "oom_kill"));
  } else if (kind_ == Kind::kCgroupV1) {
    const std::string d = dir(kMemory, group);
    report.peak_bytes = number_in(d + "/memory.max_usage_in_bytes");
    int64_t limit = number_in(d + "/memory.limit_in_bytes");
    // An unlimited v1 group says a number near 2^63.
    report.limit_bytes = limit > 0 && limit < (int64_t{1} << 62) ? limit : 0;
    report.oom_kills =
        std::max<int64_t>(0, keyed_value(read_small_file(d + "/memory.oom_control"), "oom_kill"));
  }
  return report;
}

Status ResourceLimits::remove(std::string_view group) {
  for (size_t i = 0; i < roots_.size(); ++i) {
    const std::string d = dir(i, group);
    for (int attempt = 0;; ++attempt) {
      if (::rmdir(d.c_str()) == 0 || errno == ENOENT) break;
      if (errno != EBUSY || attempt >= kRemoveAttempts)
        return fail("cannot remove " + d + ": " + std::strerror(errno));
      // Processes that outlived the group's tasks (they left their process group): ended here.
      std::istringstream pids(read_small_file(d + "/cgroup.procs"));
      for (pid_t pid = 0; pids >> pid;)
        if (pid > 0) ::kill(pid, SIGKILL);
      std::this_thread::sleep_for(kRemovePause);
    }
  }
  return Ok{};
}

Status ResourceLimits::remove_roots() {
  for (const std::string& root : roots_)
    if (::rmdir(root.c_str()) != 0 && errno != ENOENT)
      return fail("cannot remove " + root + ": " + std::strerror(errno));
  return Ok{};
}

}  // namespace trellis
