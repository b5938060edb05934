// AgentLink: how a controller reaches the agents that run its jobs. trellisd sends over gRPC
// (daemon/grpc_agent_link.h); the simulator-equivalence test fakes the agents in virtual time.
// Calls hand the request over and return at once: a slow or dead agent never stalls a scheduling
// pass (a lost launch is found again by reconciliation, a dead agent by its missed heartbeats).
#pragma once

#include <functional>
#include <string>

#include "core/result.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

class AgentLink {
 public:
  virtual ~AgentLink() = default;
  // `agent` is the address an agent registered ("host:port").
  virtual void launch(const std::string& agent, const v1::LaunchRequest& request) = 0;
  virtual void signal(const std::string& agent, const v1::SignalRequest& request) = 0;

  // Called, from any thread, with a launch that the agent refused or that could not be
  // delivered after retries, and why. Set before the first launch.
  using LaunchFailed = std::function<void(const v1::LaunchRequest&, const Error&)>;
  void on_launch_failed(LaunchFailed callback) { launch_failed_ = std::move(callback); }

 protected:
  LaunchFailed launch_failed_;
};

}  // namespace trellis
