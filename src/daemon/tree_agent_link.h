// TreeAgentLink: the AgentLink of trellisd. Everything it sends goes down the control tree
// (daemon/tree/tree_sender.h), signed once per message: a job's launch is one message to all its
// agents (each starts the tasks of its own nodes), a signal one message, a gang switch one
// message (daemon/switch_sender.h), a liveness ping one message to every agent.
//
// Calls for one job always go through the same lane (a job's signal never overtakes its launch);
// different jobs' calls go in parallel over a few lanes, each a thread of its own, so that a slow
// tree never holds a scheduling pass up. Launches that wait together at the front of a lane go in
// one message (a pass that starts many jobs costs one tree, not one per job). An agent that did
// not answer is sent the message again, alone, a few times with backoff (a launch carries the
// deadline of each try as its launch_by, so an agent that gets it too late starts nothing, and it
// is not tried again once a kill of its attempt is queued); a launch that still fails goes to
// on_launch_failed, other calls are dropped with a log line (the liveness pings find a dead agent).
//
//   TreeAgentLink agents(credentials, {.fanout = 16});
//   agents.launch({"10.0.0.7:41234", "10.0.0.8:41234"}, request);
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/agent_link.h"
#include "daemon/auth.h"
#include "daemon/switch_sender.h"
#include "daemon/tree/tree_auth.h"
#include "daemon/tree/tree_channel.h"
#include "daemon/tree/tree_sender.h"

namespace trellis {

class TreeAgentLink final : public AgentLink {
 public:
  struct Options {
    int fanout = 16;                 // children per agent in every tree
    double deadline_seconds = 5;     // per tree, for launches and signals
    int daemon_uid = -1;             // whose processes may read the session keys; -1 = our own
    SwitchSender::Options switches;  // gang switches
  };
  // `credentials` must outlive the link.
  TreeAgentLink(const CredentialSource& credentials, Options options);
  ~TreeAgentLink() override;  // sends what is queued (each try bounded by its deadline), then stops

  void launch(const std::vector<std::string>& agents, const v1::LaunchRequest& request) override;
  void signal(const std::vector<std::string>& agents, const v1::SignalRequest& request) override;
  void gang_switch(SwitchOrder order) override { switches_.send(std::move(order)); }
  std::vector<std::string> ping(const std::vector<std::string>& agents,
                                const std::vector<std::string>& register_again,
                                double deadline_seconds) override;

  // The tree every message goes down (for benchmarks and tests that time one).
  TreeSender& tree() { return tree_; }

 private:
  static constexpr int kLanes = 4;
  static constexpr size_t kMaxBatch = 64;  // launches in one message
  static constexpr int kAttempts = 4;

  struct Pending {
    std::vector<std::string> agents;
    std::optional<v1::LaunchRequest> launch;  // a launch, else a signal
    v1::SignalRequest signal;
  };
  struct Lane {
    std::deque<Pending> queue;
    std::thread thread;
  };
  void enqueue(int64_t job, Pending pending);
  void run(Lane& lane);
  void send_launches(Lane& lane, std::vector<Pending>& batch);
  void send_signal(const Pending& pending);
  // Whether a SIGKILL of `launch`'s attempt (or of every attempt) waits in `lane`'s queue.
  bool superseded(const v1::LaunchRequest& launch, const Lane& lane);
  bool stopping();

  const Options options_;
  TreeSigner signer_;
  TreeChannel channel_;
  TreeSender tree_;
  SwitchSender switches_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  Lane lanes_[kLanes];
};

}  // namespace trellis
