// The cgroup-v2 device program (daemon/device_program.h): run here by a small interpreter of the
// eBPF instructions it may use (written from the kernel's instruction set, apart from the
// builder), on every device of a small set against a brute-force verdict; and live, where this
// host has cgroup v2 with cpuset and memory controllers and the test runs as root: a process in
// the group is refused the denied device and may open another.
#include "daemon/device_program.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>

#include "daemon_test_support.h"

namespace trellis {
namespace {

// The verdict of `program` for one request, or nullopt when it leaves what a verifier would take
// (an instruction outside the few below, a jump out of the program, no exit).
std::optional<int64_t> run_program(const std::vector<DeviceInstruction>& program, uint32_t type,
                                   uint32_t access, uint32_t major, uint32_t minor) {
  const std::array<uint32_t, 3> context = {(access << 16) | type, major, minor};
  std::array<uint64_t, 11> r{};
  constexpr uint64_t kContextAddress = 1 << 20;
  r[1] = kContextAddress;
  for (size_t pc = 0, steps = 0; pc < program.size() && steps < 10000; ++pc, ++steps) {
    const DeviceInstruction& i = program[pc];
    const int dst = i.registers & 0x0f, src = i.registers >> 4;
    if (dst > 10 || src > 10) return std::nullopt;
    switch (i.code) {
      case BPF_LDX | BPF_MEM | BPF_W: {
        const int64_t at = static_cast<int64_t>(r[src] - kContextAddress) + i.offset;
        if (r[src] != kContextAddress || at < 0 || at > 8 || at % 4 != 0) return std::nullopt;
        r[dst] = context[static_cast<size_t>(at / 4)];
        break;
      }
      case BPF_ALU | BPF_AND | BPF_K:
        r[dst] = static_cast<uint32_t>(r[dst]) & static_cast<uint32_t>(i.immediate);
        break;
      case BPF_ALU64 | BPF_MOV | BPF_K:
        r[dst] = static_cast<uint64_t>(static_cast<int64_t>(i.immediate));
        break;
      case BPF_JMP | BPF_JNE | BPF_K:
        if (r[dst] != static_cast<uint64_t>(static_cast<int64_t>(i.immediate))) {
          if (i.offset < 0 || pc + i.offset + 1 >= program.size()) return std::nullopt;
          pc += static_cast<size_t>(i.offset);
        }
        break;
      case BPF_JMP | BPF_EXIT:
        return static_cast<int64_t>(r[0]);
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

TEST(DeviceProgramTest, RefusesExactlyTheDeniedDevicesForEveryAccess) {
  const std::vector<DeviceNumber> denied = {{'c', 195, 1}, {'c', 195, 3}, {'b', 8, 0}, {'c', 1, 7}};
  const std::vector<DeviceInstruction> program = device_deny_program(denied);
  int refused = 0;
  for (char type : {'c', 'b'})
    for (unsigned major : {1u, 8u, 195u, 226u})
      for (unsigned minor = 0; minor < 9; ++minor)
        for (uint32_t access : std::initializer_list<uint32_t>{
                 BPF_DEVCG_ACC_MKNOD, BPF_DEVCG_ACC_READ, BPF_DEVCG_ACC_WRITE,
                 BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE}) {
          const bool deny = std::find(denied.begin(), denied.end(),
                                      DeviceNumber{type, major, minor}) != denied.end();
          std::optional<int64_t> verdict =
              run_program(program, type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, access,
                          major, minor);
          ASSERT_TRUE(verdict) << "the program does not run to an exit";
          EXPECT_EQ(*verdict, deny ? 0 : 1) << type << " " << major << ":" << minor;
          refused += deny ? 1 : 0;
        }
  EXPECT_EQ(refused, 4 * 4);  // each denied device, for each of the 4 accesses
  // With nothing denied, everything is allowed.
  EXPECT_EQ(run_program(device_deny_program({}), BPF_DEVCG_DEV_CHAR, BPF_DEVCG_ACC_READ, 195, 0),
            1);
}

// Live, on a cgroup-v2 host: a process in the group cannot open a denied device (a character
// device made here with /dev/full's number) and can open /dev/null.
TEST(DeviceProgramTest, LiveAProcessInTheGroupIsRefusedTheDeniedDevice) {
  if (::geteuid() != 0) GTEST_SKIP() << "not root: the test cannot make cgroups or load programs";
  ResourceLimits limits = ResourceLimits::open({.name = "device-program-test"});
  if (limits.kind() != ResourceLimits::Kind::kCgroupV2) {
    (void)limits.remove_roots();
    GTEST_SKIP() << "this host's cgroups are not v2 with controllers (" << limits.describe()
                 << "); v1's device rules are tested live by ResourceLimitsTest";
  }
  testing::TempDir dir;
  const std::string device = dir / "full";
  ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
  // apply() probes the denial from inside the group itself (a process that must be refused).
  Result<std::vector<std::string>> procs =
      limits.apply("1.1", {.denied_devices = {{device, DeviceNumber{'c', 1, 7}}}});
  ASSERT_TRUE(procs) << procs.error().message;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string self = std::to_string(::getpid());
    const int procs_fd = ::open(procs->front().c_str(), O_WRONLY);
    if (procs_fd < 0 || ::write(procs_fd, self.data(), self.size()) < 0) ::_exit(3);
    ::close(procs_fd);
    if (::open(device.c_str(), O_RDONLY) >= 0) ::_exit(1);  // must be refused
    if (::open("/dev/null", O_RDONLY) < 0) ::_exit(2);      // must be allowed
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "exit " << WEXITSTATUS(status) << " (1: opened the denied device, 2: refused /dev/null)";
  EXPECT_TRUE(limits.remove("1.1"));
  EXPECT_TRUE(limits.remove_roots());
}

}  // namespace
}  // namespace trellis
