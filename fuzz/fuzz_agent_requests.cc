// The agent's Launch and Signal requests (daemon/agent_requests.h), decoded from the fuzzer's
// bytes as a controller would send them: the first byte picks which. A launch that passes the
// checks yields tasks whose environment is well formed and carries Trellis's variables, and whose
// job shell reads back the command and the node's place in the step (or that run the command
// itself: a batch step, or a step of one task that needs no PMI); a signal that passes has a
// grace period that is not negative.
#include <algorithm>

#include "daemon/agent_requests.h"
#include "fuzz_support.h"
#include "shell/shell_options.h"
#include "trellis/v1/trellis.pb.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::unordered_set<std::string> served = {"n0", "n1", "n2", "gpu0"};
  const std::vector<std::string> agent_env = {"PATH=/usr/bin:/bin", "HOME=/root", "odd", "=x"};
  if (data[0] & 1) {
    v1::SignalRequest request;
    if (!request.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
    Result<std::chrono::milliseconds> grace =
        check_signal_request(request, std::chrono::milliseconds(10000));
    if (grace) FUZZ_CHECK(grace->count() >= 0, request.ShortDebugString());
    return 0;
  }
  v1::LaunchRequest request;
  if (!request.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
  Result<std::vector<int>> mine = check_launch_request(request, served);
  if (!mine) return 0;
  for (int node_id : *mine) {
    FUZZ_CHECK(node_id >= 0 && node_id < request.nodes_size(), request.ShortDebugString());
    const std::string& node = request.nodes(node_id);
    FUZZ_CHECK(served.contains(node), node);
    ShellSetup shell;
    shell.binary = "/usr/libexec/trellis-shell";
    shell.socket = "trellis-agent-shells-fuzz";
    TaskSpec spec = task_spec(request, node_id, agent_env, shell);
    const std::vector<std::string> command(request.argv().begin(), request.argv().end());
    if (spec.shell) {
      FUZZ_CHECK(spec.argv.size() > 1 && spec.argv[0] == shell.binary, request.ShortDebugString());
      Result<ShellOptions> options =
          parse_shell_options(std::vector<std::string>(spec.argv.begin() + 1, spec.argv.end()));
      FUZZ_CHECK(options, request.ShortDebugString() + ": " +
                              (options ? std::string() : options.error().message));
      FUZZ_CHECK(options->argv == command, request.ShortDebugString());
      FUZZ_CHECK(options->mpi != MpiKind::kAuto, request.ShortDebugString());
      FUZZ_CHECK(options->node == node, node);
      FUZZ_CHECK(options->node_index == node_id, request.ShortDebugString());
    } else {
      // Started without a shell (a batch step, or one task needing no PMI): the command itself.
      FUZZ_CHECK(spec.argv == command, request.ShortDebugString());
      FUZZ_CHECK(!request.script().empty() || launch_layout(request).ntasks() == 1,
                 request.ShortDebugString());
    }
    FUZZ_CHECK(spec.key.job_id > 0 && spec.key.attempt > 0, request.ShortDebugString());
    for (const std::string& entry : spec.env) {
      FUZZ_CHECK(entry.find('=') != std::string::npos && entry[0] != '=', entry);
      FUZZ_CHECK(entry.find('\0') == std::string::npos, entry);
    }
    const std::string job_id = "TRELLIS_JOB_ID=" + std::to_string(request.job_id());
    FUZZ_CHECK(std::count(spec.env.begin(), spec.env.end(), job_id) == 1,
               request.ShortDebugString());
  }
  return 0;
}
