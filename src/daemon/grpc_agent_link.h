// GrpcAgentLink: the AgentLink of trellisd. Each agent has its own sender thread and queue, so a
// slow or dead agent delays only its own launches, never a scheduling pass or other agents. A
// failed call is retried a few times with backoff, then dropped with a log line: the agent's
// missed heartbeats (node down) or the next reconciliation take over from there.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/agent_link.h"
#include "daemon/auth.h"
#include "trellis/v1/trellis.grpc.pb.h"

namespace trellis {

class GrpcAgentLink final : public AgentLink {
 public:
  // `credentials` must outlive the link.
  explicit GrpcAgentLink(const CredentialSource& credentials, double deadline_seconds = 5.0);
  ~GrpcAgentLink() override;  // sends what is queued (bounded by the deadline), then stops

  void launch(const std::string& agent, const v1::LaunchRequest& request) override;
  void signal(const std::string& agent, const v1::SignalRequest& request) override;

 private:
  using Call = std::function<grpc::Status(v1::Agent::Stub&, grpc::ClientContext&)>;
  struct Sender {
    std::unique_ptr<v1::Agent::Stub> stub;
    std::deque<std::pair<std::string, Call>> queue;  // (what, call)
    std::thread thread;
  };
  void enqueue(const std::string& agent, std::string what, Call call);
  void run(const std::string& agent, Sender& sender);

  const CredentialSource& credentials_;
  const double deadline_seconds_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, std::unique_ptr<Sender>> senders_;
};

}  // namespace trellis
