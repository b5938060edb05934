// ResourceLimits: holds one group of tasks (a job attempt's tasks on this agent, "JOB.ATTEMPT",
// as the freezer names them) to what the group was given on its node (core/node_grant.h),
// with the kernel's cgroup controllers:
//   cpuset   the CPUs of its cores (sched_getaffinity inside the job shows only those) and the
//            memory nodes they sit on;
//   memory   a hard limit on what its processes use (swap included where the kernel counts it):
//            the kernel's OOM killer acts inside the group, never on the agent's helpers, which
//            live outside it;
//   devices  the character devices it may not open (the node's GPUs it was not given).
//
// Two kinds, chosen by what the host has (open() finds it; the agent logs describe() at start):
//   kCgroupV1  one cgroup per group under the agent's own in each of the cpuset, memory and
//              devices hierarchies (hosts whose unified hierarchy has no controllers);
//              devices by devices.deny.
//   kCgroupV2  one cgroup under the agent's own in the unified hierarchy, with cpuset and memory
//              enabled in each parent's cgroup.subtree_control (Debian 12's default); devices
//              by a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the group
//              (daemon/device_program.h).
//   kNone      neither: apply() refuses any limit, so that a node that cannot hold a grant is
//              drained instead of running jobs unlimited.
// CPU and memory-node lists are the kernel's "0-3,8" form, core/id_ranges.h's. Every value
// written is read back (a cpuset the kernel trimmed to what the parent has, a limit
// it refused): apply() fails naming the file, what was written and what it says now. A denied
// device is checked from inside the group: a probe process joins it and must be refused the
// device (v1's devices.list does not list denials under an allow-all default; v2 has no file).
//
// Tests point Options at a tree laid out in a temporary directory (the files the kernel would
// have); the live tests use this host's hierarchies.
//
//   ResourceLimits limits = ResourceLimits::open({.name = "agent-6817"});
//   Result<std::vector<std::string>> procs =
//       limits.apply("12.1", {.cpus = {0, 1}, .memory_bytes = 64 << 20});
//   // each task's process writes its pid to every file of *procs before it execs
//   ResourceLimits::MemoryReport used = limits.memory_report("12.1");  // peak, OOM kills
//   limits.remove("12.1");
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

// A device as the device controller names it: "c 195:0".
struct DeviceNumber {
  char type = 'c';  // 'c' character, 'b' block
  unsigned major = 0, minor = 0;
  bool operator==(const DeviceNumber&) const = default;
};
// The number of the device file at `path` (stat); an error names the path.
Result<DeviceNumber> device_number(const std::string& path);

// A device file the group may not open, and its number.
struct DeniedDevice {
  std::string path;
  DeviceNumber number;
};

struct NodeLimits {
  std::vector<int> cpus;          // host CPU ids the group may run on; empty: the agent's own
  std::vector<int> memory_nodes;  // NUMA nodes its memory comes from; empty: the agent's own
  int64_t memory_bytes = 0;       // hard limit; 0: none
  std::vector<DeniedDevice> denied_devices;
};

class ResourceLimits {
 public:
  enum class Kind { kCgroupV2, kCgroupV1, kNone };
  struct Options {
    std::string name = "agent";  // the agent's cgroup is trellis-NAME, as the freezer's
    // Where the hierarchies are mounted, for tests on a tree in a directory: v2's unified root;
    // v1's directory holding cpuset/, memory/ and devices/ (each a hierarchy). Both empty: found
    // from /proc/self/mountinfo, under this process's own cgroups.
    std::string v2_mount, v1_mount;
    // Check each denied device from inside the group (a probe process must be refused it).
    // Off only for trees that are not cgroups (tests of the files written).
    bool probe_devices = true;
  };

  static ResourceLimits open(Options options);

  Kind kind() const { return kind_; }
  // "cgroup-v1 (cpuset, memory, devices)", "cgroup-v2 (cpuset, memory)" or "none (...why)".
  const std::string& describe() const { return description_; }

  // Makes the group's cgroups and applies `limits`, each value read back; returns the files a
  // task's process writes its pid to, to join them (one per hierarchy). Idempotent for a group
  // that exists (a restarted agent applies its jobs' limits again).
  Result<std::vector<std::string>> apply(std::string_view group, const NodeLimits& limits);

  struct MemoryReport {
    int64_t peak_bytes = -1;  // the most the group used; -1 when the kernel does not say
    int64_t limit_bytes = 0;  // 0: none
    int64_t oom_kills = 0;    // processes the OOM killer ended inside the group
  };
  MemoryReport memory_report(std::string_view group) const;

  // Removes the group's cgroups (its processes have ended); a group never made is no error.
  Status remove(std::string_view group);

  // Removes the agent's own directories, once no group is left in them (the agent stops).
  Status remove_roots();

  // The agent's directories, one per hierarchy (for tests and `cluster down`).
  const std::vector<std::string>& roots() const { return roots_; }

 private:
  // The group's directory in hierarchy `i` of roots_ (cpuset, memory, devices for v1).
  std::string dir(size_t i, std::string_view group) const;
  Status apply_v1(std::string_view group, const NodeLimits& limits);
  Status apply_v2(std::string_view group, const NodeLimits& limits);
  Status check_denied(std::string_view group, const NodeLimits& limits) const;

  Kind kind_ = Kind::kNone;
  bool probe_devices_ = true;
  std::string description_;
  // v2: {unified}; v1: {cpuset, memory, devices}.
  std::vector<std::string> roots_;
};

}  // namespace trellis
