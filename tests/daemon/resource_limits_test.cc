// The agent's resource limits (daemon/resource_limits.h): the cgroup v2 and v1 files it writes and
// reads, on trees laid out in a temporary directory as the kernel would have them; and, where this
// host has cgroup v1's cpuset, memory and devices controllers (and the test runs as root), live:
// a process in a group runs only on its CPU, a memory hog is killed by the OOM killer inside its
// group while a neighbour group's process is unharmed, and a denied device cannot be opened while
// an allowed one can.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "daemon/resource_limits.h"
#include "daemon_test_support.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;

// Files of a tree: PATH -> content ("" makes an empty file).
void lay_out(const fs::path& root, const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [path, text] : files) {
    fs::create_directories((root / path).parent_path());
    std::ofstream(root / path) << text;
  }
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(ResourceLimitsTest, CgroupV2FilesAreWrittenAndReadBack) {
  testing::TempDir dir;
  const fs::path v2 = fs::path(dir.path()) / "v2";
  const std::string group = "trellis-t/12.1/";
  lay_out(v2, {{"cgroup.controllers", "cpuset cpu io memory pids\n"},
               {"cgroup.subtree_control", ""},
               {"trellis-t/cgroup.subtree_control", ""},
               {group + "cpuset.cpus", ""},
               {group + "cpuset.mems", ""},
               {group + "memory.max", ""},
               {group + "memory.swap.max", ""},
               {group + "memory.oom.group", ""},
               {group + "memory.peak", "7340032\n"},
               {group + "memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 2\n"},
               {group + "cgroup.procs", ""}});
  ResourceLimits limits = ResourceLimits::open({.name = "t", .v2_mount = v2.string()});
  ASSERT_EQ(limits.kind(), ResourceLimits::Kind::kCgroupV2) << limits.describe();
  EXPECT_NE(limits.describe().find("cgroup-v2 (cpuset, memory)"), std::string::npos);
  // The controllers are handed down to the agent's cgroup and from it to the groups.
  EXPECT_EQ(text_of(v2 / "cgroup.subtree_control"), "+cpuset +memory");
  EXPECT_EQ(text_of(v2 / "trellis-t/cgroup.subtree_control"), "+cpuset +memory");
  Result<std::vector<std::string>> procs =
      limits.apply("12.1", {.cpus = {0, 1, 3}, .memory_nodes = {0}, .memory_bytes = 64 << 20});
  ASSERT_TRUE(procs) << procs.error().message;
  EXPECT_EQ(*procs, std::vector<std::string>{(v2 / group / "cgroup.procs").string()});
  EXPECT_EQ(text_of(v2 / group / "cpuset.cpus"), "0-1,3");
  EXPECT_EQ(text_of(v2 / group / "cpuset.mems"), "0");
  EXPECT_EQ(text_of(v2 / group / "memory.max"), std::to_string(64 << 20));
  EXPECT_EQ(text_of(v2 / group / "memory.swap.max"), "0");
  EXPECT_EQ(text_of(v2 / group / "memory.oom.group"), "1");
  ResourceLimits::MemoryReport used = limits.memory_report("12.1");
  EXPECT_EQ(used.peak_bytes, 7340032);
  EXPECT_EQ(used.limit_bytes, 64 << 20);
  EXPECT_EQ(used.oom_kills, 2);

  // A value that does not read back as written (the kernel trimmed it) is an error naming it.
  fs::remove(v2 / group / "cpuset.cpus");
  fs::create_symlink("/dev/null", v2 / group / "cpuset.cpus");
  Result<std::vector<std::string>> trimmed = limits.apply("12.1", {.cpus = {5}});
  ASSERT_FALSE(trimmed);
  EXPECT_NE(trimmed.error().message.find("cpuset.cpus says '' after '5'"), std::string::npos)
      << trimmed.error().message;
  // Devices need a BPF program attached to the group on v2 (daemon/device_program.h), which a
  // directory that is no cgroup cannot take: refused, naming the group, rather than left open.
  Result<std::vector<std::string>> devices =
      limits.apply("12.1", {.denied_devices = {{"/dev/nvidia1", DeviceNumber{'c', 195, 1}}}});
  ASSERT_FALSE(devices);
  EXPECT_NE(devices.error().message.find("device program"), std::string::npos)
      << devices.error().message;
  EXPECT_NE(devices.error().message.find("trellis-t/12.1"), std::string::npos)
      << devices.error().message;
  EXPECT_FALSE(limits.apply("../x", {}));
  EXPECT_FALSE(limits.apply("", {}));
}

TEST(ResourceLimitsTest, CgroupV1FilesAreWrittenAndReadBack) {
  testing::TempDir dir;
  const fs::path v1 = fs::path(dir.path()) / "v1";
  lay_out(v1, {{"cpuset/cpuset.cpus", "0-3\n"},
               {"cpuset/cpuset.mems", "0\n"},
               {"cpuset/trellis-t/cpuset.cpus", ""},
               {"cpuset/trellis-t/cpuset.mems", ""},
               {"cpuset/trellis-t/5.1/cpuset.cpus", ""},
               {"cpuset/trellis-t/5.1/cpuset.mems", ""},
               {"memory/trellis-t/memory.limit_in_bytes", ""},
               {"memory/trellis-t/5.1/memory.limit_in_bytes", ""},
               {"memory/trellis-t/5.1/memory.memsw.limit_in_bytes", ""},
               {"memory/trellis-t/5.1/memory.max_usage_in_bytes", "999424\n"},
               {"memory/trellis-t/5.1/memory.oom_control",
                "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n"},
               {"devices/trellis-t/devices.deny", ""},
               {"devices/trellis-t/5.1/devices.deny", ""}});
  ResourceLimits limits =
      ResourceLimits::open({.name = "t", .v1_mount = v1.string(), .probe_devices = false});
  ASSERT_EQ(limits.kind(), ResourceLimits::Kind::kCgroupV1) << limits.describe();
  // The agent's cpuset starts empty in v1: it is given its parent's.
  EXPECT_EQ(text_of(v1 / "cpuset/trellis-t/cpuset.cpus"), "0-3");
  EXPECT_EQ(text_of(v1 / "cpuset/trellis-t/cpuset.mems"), "0");
  Result<std::vector<std::string>> procs =
      limits.apply("5.1", {.cpus = {2},
                           .memory_bytes = 32 << 20,
                           .denied_devices = {{"/dev/nvidia1", DeviceNumber{'c', 195, 1}}}});
  ASSERT_TRUE(procs) << procs.error().message;
  ASSERT_EQ(procs->size(), 3u);
  EXPECT_EQ((*procs)[1], (v1 / "memory/trellis-t/5.1/cgroup.procs").string());
  EXPECT_EQ(text_of(v1 / "cpuset/trellis-t/5.1/cpuset.cpus"), "2");
  EXPECT_EQ(text_of(v1 / "cpuset/trellis-t/5.1/cpuset.mems"), "0");  // inherited
  EXPECT_EQ(text_of(v1 / "memory/trellis-t/5.1/memory.limit_in_bytes"), std::to_string(32 << 20));
  EXPECT_EQ(text_of(v1 / "memory/trellis-t/5.1/memory.memsw.limit_in_bytes"),
            std::to_string(32 << 20));
  EXPECT_EQ(text_of(v1 / "devices/trellis-t/5.1/devices.deny"), "c 195:1 rwm");
  ResourceLimits::MemoryReport used = limits.memory_report("5.1");
  EXPECT_EQ(used.peak_bytes, 999424);
  EXPECT_EQ(used.limit_bytes, 32 << 20);
  EXPECT_EQ(used.oom_kills, 1);

  // A host without the devices hierarchy holds no limits, and says what it lacks.
  fs::remove_all(v1 / "devices");
  ResourceLimits partial = ResourceLimits::open({.name = "t", .v1_mount = v1.string()});
  EXPECT_EQ(partial.kind(), ResourceLimits::Kind::kNone);
  EXPECT_NE(partial.describe().find("cgroup-v1 lacks devices"), std::string::npos)
      << partial.describe();
  Result<std::vector<std::string>> refused = partial.apply("5.1", {.cpus = {1}});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, Error::Code::kUnavailable);
}

// In a forked child: joins the group's cgroups, then runs `body`, whose return is the exit status.
template <typename Body>
pid_t run_in_group(const std::vector<std::string>& procs, Body body) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  const std::string self = std::to_string(::getpid());
  for (const std::string& file : procs) {
    int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, self.data(), self.size()) != static_cast<ssize_t>(self.size()))
      ::_exit(90);
    ::close(fd);
  }
  ::_exit(body());
}

int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(ResourceLimitsTest, LimitsHoldInsideTheGroupOnThisHostsCgroupV1) {
  if (::geteuid() != 0) GTEST_SKIP() << "making cgroups needs root";
  const std::string name = "limits-test-" + std::to_string(::getpid());
  ResourceLimits limits = ResourceLimits::open({.name = name});
  if (limits.kind() != ResourceLimits::Kind::kCgroupV1) {
    (void)limits.remove_roots();
    GTEST_SKIP() << "this host has no cgroup v1 cpuset, memory and devices controllers: "
                 << limits.describe();
  }
  cpu_set_t mine;
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  int cpu = -1;
  for (int c = CPU_SETSIZE - 1; c >= 0; --c)
    if (CPU_ISSET(c, &mine)) cpu = c;  // the lowest this process may use
  ASSERT_GE(cpu, 0);

  // Two "GPUs": device files with the numbers of /dev/null and /dev/zero.
  testing::TempDir dir;
  const std::string given = dir.path() + "/gpu0", denied = dir.path() + "/gpu1";
  ASSERT_EQ(::mknod(given.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0) << std::strerror(errno);
  ASSERT_EQ(::mknod(denied.c_str(), S_IFCHR | 0666, makedev(1, 5)), 0) << std::strerror(errno);
  Result<DeviceNumber> number = device_number(denied);
  ASSERT_TRUE(number) << number.error().message;
  EXPECT_EQ(*number, (DeviceNumber{'c', 1, 5}));

  Result<std::vector<std::string>> hog = limits.apply(
      "hog", {.cpus = {cpu}, .memory_bytes = 64 << 20, .denied_devices = {{denied, *number}}});
  ASSERT_TRUE(hog) << hog.error().message;
  Result<std::vector<std::string>> neighbour =
      limits.apply("neighbour", {.cpus = {cpu}, .memory_bytes = 64 << 20});
  ASSERT_TRUE(neighbour) << neighbour.error().message;

  // Affinity and devices, seen from inside the group.
  pid_t inside = run_in_group(*hog, [&] {
    cpu_set_t set;
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return 10;
    if (CPU_COUNT(&set) != 1 || !CPU_ISSET(cpu, &set)) return 11;
    int fd = ::open(given.c_str(), O_RDONLY);
    if (fd < 0) return 12;
    ::close(fd);
    if (::open(denied.c_str(), O_RDONLY) >= 0 || errno != EPERM) return 13;
    return 0;
  });
  int status = wait_for(inside);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10/11: affinity, 12: the given device, 13: the denied";

  // 256 MiB touched under a 64 MiB limit: the OOM killer ends it inside its group; the
  // neighbour's 16 MiB under the same limit is unharmed.
  auto touch = [](size_t bytes) {
    return [bytes] {
      void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return 20;
      std::memset(p, 1, bytes);
      return 0;
    };
  };
  pid_t hog_pid = run_in_group(*hog, touch(256u << 20));
  pid_t calm_pid = run_in_group(*neighbour, touch(16u << 20));
  int hog_status = wait_for(hog_pid), calm_status = wait_for(calm_pid);
  EXPECT_TRUE(WIFSIGNALED(hog_status) && WTERMSIG(hog_status) == SIGKILL) << hog_status;
  EXPECT_TRUE(WIFEXITED(calm_status) && WEXITSTATUS(calm_status) == 0) << calm_status;
  ResourceLimits::MemoryReport hog_used = limits.memory_report("hog");
  EXPECT_GE(hog_used.oom_kills, 1);
  EXPECT_EQ(hog_used.limit_bytes, 64 << 20);
  EXPECT_GT(hog_used.peak_bytes, 32 << 20);
  EXPECT_EQ(limits.memory_report("neighbour").oom_kills, 0);

  EXPECT_TRUE(limits.remove("hog"));
  EXPECT_TRUE(limits.remove("neighbour"));
  EXPECT_TRUE(limits.remove("never-made"));
  for (const std::string& root : limits.roots()) EXPECT_TRUE(fs::exists(root)) << root;
  EXPECT_TRUE(limits.remove_roots());
  for (const std::string& root : limits.roots()) EXPECT_FALSE(fs::exists(root)) << root;
}

}  // namespace
}  // namespace trellis
