// What an agent checks of a controller's Launch and Signal requests before acting on them, and the
// task a launch asks for. Who called is checked apart (Agent::Service, with MUNGE); these are free
// functions of the request alone, so that the fuzzer (fuzz/fuzz_agent_requests.cc) drives them
// with no agent, server or process.
//
//   if (Status ok = check_launch_request(request, served); !ok) return invalid(ok.error());
//   for (const std::string& node : request.nodes()) runner.launch(task_spec(request, node, env));
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "core/result.h"
#include "daemon/task_runner.h"

namespace trellis {

namespace v1 {
class LaunchRequest;
class SignalRequest;
}  // namespace v1

// Ok, or kInvalidArgument with a message naming the field: ids and ranks in range, every node
// served by this agent (`served`) and named once, a command, an absolute cwd, sane ids and
// environment names.
Status check_launch_request(const v1::LaunchRequest& request, const std::set<std::string>& served);

// The task to start on `node`, one of the nodes of a request that passed check_launch_request().
// Its environment is the agent's own (`agent_env`, "NAME=value"), the user's identity when the
// task runs as another user, the job's variables, then Trellis's (TRELLIS_JOB_ID, ...), which the
// job cannot override.
TaskSpec task_spec(const v1::LaunchRequest& request, const std::string& node,
                   const std::vector<std::string>& agent_env);

// The grace period between SIGTERM and SIGKILL that a Signal asks for (`default_grace` when it
// gives none), or kInvalidArgument naming the field.
Result<std::chrono::milliseconds> check_signal_request(const v1::SignalRequest& request,
                                                       std::chrono::milliseconds default_grace);

}  // namespace trellis
