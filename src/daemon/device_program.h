// The device rules of a cgroup-v2 group: v2 has no devices.deny file; the kernel asks a
// BPF_PROG_TYPE_CGROUP_DEVICE program attached to the group at each open or mknod of a device
// by one of its processes, and refuses it when the program returns 0. This file builds that
// program from the devices to refuse, and loads and attaches it (daemon/resource_limits.h uses
// both for its kCgroupV2 groups).
//
// The program reads the request (struct bpf_cgroup_dev_ctx: the access and device type, major,
// minor), and for each denied device returns 0 when all three match; otherwise 1. Every access
// (read, write, mknod) to a denied device is refused, as v1's "c M:m rwm" rule does.
//
//   std::vector<DeviceInstruction> program = device_deny_program({{'c', 195, 1}});
//   Status attached = attach_device_program("/sys/fs/cgroup/trellis-a/12.1", program);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "daemon/resource_limits.h"

namespace trellis {

// One eBPF instruction, laid out as the kernel's struct bpf_insn (8 bytes).
struct DeviceInstruction {
  uint8_t code = 0;
  uint8_t registers = 0;  // dst in the low 4 bits, src in the high 4
  int16_t offset = 0;
  int32_t immediate = 0;
};
static_assert(sizeof(DeviceInstruction) == 8);

// The program that refuses `denied` and allows every other device.
std::vector<DeviceInstruction> device_deny_program(const std::vector<DeviceNumber>& denied);

// Loads `program` into the kernel and attaches it to the cgroup directory `cgroup_dir`
// (BPF_F_ALLOW_MULTI: beside what the parents attached, which still apply). A group that has a
// program attached already keeps it (a restarted agent applies its jobs' limits again; a job's
// grant does not change while it runs). Errors name the step and the kernel's verifier log.
Status attach_device_program(const std::string& cgroup_dir,
                             const std::vector<DeviceInstruction>& program);

}  // namespace trellis
