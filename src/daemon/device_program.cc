#include "daemon/device_program.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trellis {
namespace {

static_assert(sizeof(DeviceInstruction) == sizeof(bpf_insn));

DeviceInstruction instruction(uint8_t code, uint8_t dst, uint8_t src, int16_t offset,
                              int32_t immediate) {
  return {code, static_cast<uint8_t>((dst & 0x0f) | ((src & 0x0f) << 4)), offset, immediate};
}

long bpf(int command, bpf_attr& attributes) {
  return ::syscall(__NR_bpf, command, &attributes, sizeof attributes);
}

// The registers: r1 the context on entry; r2 its device type, r3 major, r4 minor; r0 the verdict.
constexpr uint8_t kContext = 1, kType = 2, kMajor = 3, kMinor = 4, kVerdict = 0;

}  // namespace

std::vector<DeviceInstruction> device_deny_program(const std::vector<DeviceNumber>& denied) {
  std::vector<DeviceInstruction> program;
  // struct bpf_cgroup_dev_ctx { __u32 access_type; __u32 major; __u32 minor; }: the type in the
  // low 16 bits of access_type (the access in the high ones, not looked at).
  program.push_back(instruction(BPF_LDX | BPF_MEM | BPF_W, kType, kContext, 0, 0));
  program.push_back(instruction(BPF_ALU | BPF_AND | BPF_K, kType, 0, 0, 0xffff));
  program.push_back(instruction(BPF_LDX | BPF_MEM | BPF_W, kMajor, kContext, 4, 0));
  program.push_back(instruction(BPF_LDX | BPF_MEM | BPF_W, kMinor, kContext, 8, 0));
  for (const DeviceNumber& d : denied) {
    const int32_t type = d.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
    // Not this device: jump over the rest of its test to the next one's.
    program.push_back(instruction(BPF_JMP | BPF_JNE | BPF_K, kType, 0, 4, type));
    program.push_back(
        instruction(BPF_JMP | BPF_JNE | BPF_K, kMajor, 0, 3, static_cast<int32_t>(d.major)));
    program.push_back(
        instruction(BPF_JMP | BPF_JNE | BPF_K, kMinor, 0, 2, static_cast<int32_t>(d.minor)));
    program.push_back(instruction(BPF_ALU64 | BPF_MOV | BPF_K, kVerdict, 0, 0, 0));
    program.push_back(instruction(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  }
  program.push_back(instruction(BPF_ALU64 | BPF_MOV | BPF_K, kVerdict, 0, 0, 1));
  program.push_back(instruction(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
  return program;
}

Status attach_device_program(const std::string& cgroup_dir,
                             const std::vector<DeviceInstruction>& program) {
  const int group = ::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (group < 0) return fail("cannot open " + cgroup_dir + ": " + std::strerror(errno));
  // Already attached (by this agent's earlier life): kept.
  {
    bpf_attr query{};
    query.query.target_fd = static_cast<uint32_t>(group);
    query.query.attach_type = BPF_CGROUP_DEVICE;
    if (bpf(BPF_PROG_QUERY, query) == 0 && query.query.prog_cnt > 0) {
      ::close(group);
      return Ok{};
    }
  }
  static const char kLicense[] = "GPL";
  std::vector<char> log(16384, '\0');
  bpf_attr load{};
  load.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  load.insns = reinterpret_cast<uint64_t>(program.data());
  load.insn_cnt = static_cast<uint32_t>(program.size());
  load.license = reinterpret_cast<uint64_t>(kLicense);
  load.log_buf = reinterpret_cast<uint64_t>(log.data());
  load.log_size = static_cast<uint32_t>(log.size());
  load.log_level = 1;
  const long loaded = bpf(BPF_PROG_LOAD, load);
  if (loaded < 0) {
    const int error = errno;
    ::close(group);
    std::string verifier(log.data());
    return fail("cannot load the device program for " + cgroup_dir + ": " + std::strerror(error) +
                (verifier.empty() ? "" : " (verifier: " + verifier + ")"));
  }
  const int program_fd = static_cast<int>(loaded);
  bpf_attr attach{};
  attach.target_fd = static_cast<uint32_t>(group);
  attach.attach_bpf_fd = static_cast<uint32_t>(program_fd);
  attach.attach_type = BPF_CGROUP_DEVICE;
  attach.attach_flags = BPF_F_ALLOW_MULTI;
  const long attached = bpf(BPF_PROG_ATTACH, attach);
  const int error = errno;
  // The attachment holds the program; the descriptors are not needed any more.
  ::close(program_fd);
  ::close(group);
  if (attached < 0)
    return fail("cannot attach the device program to " + cgroup_dir + ": " + std::strerror(error));
  return Ok{};
}

}  // namespace trellis
