// GrpcAgentLink: the AgentLink of trellisd. Each agent has its own sender threads and queues, so
// a slow or dead agent delays only its own launches, never a scheduling pass or other agents.
// Calls for one job always go through the same sender (a job's signal never overtakes its
// launch); different jobs' calls go in parallel over a few senders, so that one agent's launches
// overlap. Launches that wait together at the front of a sender's queue go in one LaunchBatch
// call (a pass that starts many jobs on one agent costs one call, not one per job). A failed call
// is retried a few times with backoff (a launch carries the deadline of each try as its launch_by,
// so an agent that gets it too late starts nothing, and it is not retried once a kill of its
// attempt is queued); a launch that still fails goes to on_launch_failed, other calls are dropped
// with a log line (the agent's missed heartbeats or the next reconciliation take over from there).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
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
#include "trellis/v1/trellis.grpc.pb.h"

namespace trellis {

class GrpcAgentLink final : public AgentLink {
 public:
  // `credentials` must outlive the link.
  explicit GrpcAgentLink(const CredentialSource& credentials, double deadline_seconds = 5.0,
                         SwitchSender::Options switches = {});
  ~GrpcAgentLink() override;  // sends what is queued (bounded by the deadline), then stops

  void launch(const std::string& agent, const v1::LaunchRequest& request) override;
  void signal(const std::string& agent, const v1::SignalRequest& request) override;
  // Through a tree of agents (daemon/switch_sender.h).
  void gang_switch(SwitchOrder order) override { switches_.send(std::move(order)); }

 private:
  // Senders per agent.
  static constexpr int kLanes = 4;
  // Launches sent together at most (the agent takes up to 1,024).
  static constexpr size_t kMaxBatch = 64;
  static constexpr int kAttempts = 4;
  using Call = std::function<grpc::Status(v1::Agent::Stub&, grpc::ClientContext&)>;
  struct Pending {
    std::string what;  // for the log
    Call call;
    std::function<void(const grpc::Status&)> failed;  // after the last retry (may be empty)
    // A launch is not tried again once a SIGKILL of its attempt waits behind it: the controller
    // has ended that attempt (a node failed), and a late launch would start it on nodes that
    // may be another job's by then.
    int64_t job = 0;
    int attempt = 0;
    bool is_launch = false;
    bool kills_attempt = false;               // a SIGKILL of `attempt` (or of every attempt when 0)
    std::optional<v1::LaunchRequest> launch;  // a launch's request, for LaunchBatch
  };
  struct Sender {
    std::shared_ptr<v1::Agent::Stub> stub;  // shared by the agent's senders (one channel)
    std::deque<Pending> queue;
    std::thread thread;
  };
  void enqueue(const std::string& agent, int64_t job_id, Pending pending);
  void run(const std::string& agent, Sender& sender);
  // One call, tried again with backoff while it may not have arrived; the last status.
  grpc::Status send_one(const std::string& agent, Sender& sender, const Pending& pending);
  // The launches in one LaunchBatch call (tried again whole while it may not have arrived); each
  // launch's status, or the call's for all when it failed. `delivered`: the agent answered.
  std::vector<grpc::Status> send_batch(const std::string& agent, Sender& sender,
                                       std::vector<Pending>& launches, bool& delivered);
  grpc::Status call_once(Sender& sender, const Call& call);
  // Whether a SIGKILL of `launch`'s attempt waits in `sender`'s queue.
  bool superseded(const Pending& launch, const Sender& sender);

  const CredentialSource& credentials_;
  const double deadline_seconds_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::pair<std::string, int>, std::unique_ptr<Sender>> senders_;  // (agent, lane)
  SwitchSender switches_;
};

}  // namespace trellis
