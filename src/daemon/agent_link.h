// AgentLink: how a controller reaches the agents that run its jobs. trellisd sends down the
// control tree (daemon/tree_agent_link.h); the simulator-equivalence test fakes the agents in
// virtual time. Calls hand the request over and return at once: a slow or dead agent never
// stalls a scheduling pass (a lost launch is found again by reconciliation, a dead agent by the
// liveness pings).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

// One gang switch: freeze the outgoing jobs, collect their activity, thaw the incoming ones, and
// report the activity of `probe` jobs (left running, e.g. skipped as idle) without freezing them.
struct SwitchOrder {
  using JobAttempt = std::pair<int64_t, int>;  // (job id, attempt)
  int64_t id = 0;                              // the controller's count
  std::vector<std::string> agents;  // every agent with a task of these jobs, in tree order
  std::vector<JobAttempt> freeze, thaw, probe;
  // Of `freeze`: frozen without a look at their activity (v1::GangSwitch::skip_activity).
  std::vector<JobAttempt> skip_activity;
};
// Whether a job's activity is wanted when it is switched out for the `switch_out`-th time (1: the
// first), with a look every `every` switch-outs: the first (which sets the baseline of its
// processes' CPU times: a process seen for the first time counts as running) and every `every`-th
// after it. The controller's rule ([controller] activity_every), shared with the bench.
constexpr bool activity_wanted(int switch_out, int every) {
  return every <= 1 || (switch_out - 1) % every == 0;
}

// What came back: the reduced reply of every agent that answered (daemon/switch_node.h), and the
// round trip through the tree.
struct SwitchOutcome {
  SwitchOrder order;
  v1::SwitchReply reply;
  double seconds = 0;
};

class AgentLink {
 public:
  virtual ~AgentLink() = default;
  // `agents` are the addresses the agents registered ("host:port"), every agent serving a node of
  // the request, in node order (the tree's order); `request.nodes` holds every node of the job
  // on them, and each agent starts the tasks of those it serves.
  virtual void launch(const std::vector<std::string>& agents, const v1::LaunchRequest& request) = 0;
  virtual void signal(const std::vector<std::string>& agents, const v1::SignalRequest& request) = 0;

  // --- Liveness: one ping down the tree of `agents` (in node order), asking those of
  // `register_again` to register again; returns the agents that did not answer within
  // `deadline_seconds` (the tree's rebuilds included). Blocks. A link whose agents cannot be
  // pinged (the simulator equivalence test's fakes) says every agent answered: the default.
  virtual std::vector<std::string> ping(const std::vector<std::string>& agents,
                                        const std::vector<std::string>& register_again,
                                        double deadline_seconds) {
    (void)agents;
    (void)register_again;
    (void)deadline_seconds;
    return {};
  }

  // Called, from any thread, with a launch that the agent refused or that could not be
  // delivered after retries, and why. Set before the first launch.
  using LaunchFailed = std::function<void(const v1::LaunchRequest&, const Error&)>;
  void on_launch_failed(LaunchFailed callback) { launch_failed_ = std::move(callback); }

  // --- Gang switches (daemon/switch_node.h): sent in the order given, each through a tree of
  // the agents it names, one at a time. A link whose agents cannot switch (the simulator
  // equivalence test's fakes) drops them: the default.
  virtual void gang_switch(SwitchOrder order) { (void)order; }
  // Called, from the link's thread, with each switch's outcome. Set before the first switch.
  using SwitchDone = std::function<void(const SwitchOutcome&)>;
  void on_switch_done(SwitchDone callback) { switch_done_ = std::move(callback); }

 protected:
  LaunchFailed launch_failed_;
  SwitchDone switch_done_;
};

}  // namespace trellis
