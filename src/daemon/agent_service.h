// Agent::Service: what an agent does with what it is sent, by the control tree (its part of a
// launch, signal, gang switch, ping or PMI exchange: tree_part()) and by direct gRPC calls (Launch,
// LaunchBatch, Signal, Tasks, for tools and tests; each carries a MUNGE credential of the daemon
// user). Private to the agent (daemon/agent.h).
#pragma once

#include <grpcpp/grpcpp.h>

#include "daemon/agent.h"
#include "trellis/v1/trellis.grpc.pb.h"

namespace trellis {

struct TaskInfo;
// A task as the RPCs carry it.
v1::TaskStatus task_status(const TaskInfo& task);

class Agent::Service final : public v1::Agent::Service {
 public:
  explicit Service(Agent& agent) : agent_(agent) {}

  grpc::Status Launch(grpc::ServerContext* context, const v1::LaunchRequest* request,
                      v1::LaunchReply*) override;
  grpc::Status LaunchBatch(grpc::ServerContext* context, const v1::LaunchBatchRequest* request,
                           v1::LaunchBatchReply* reply) override;
  grpc::Status Signal(grpc::ServerContext* context, const v1::SignalRequest* request,
                      v1::SignalReply* reply) override;
  grpc::Status Tasks(grpc::ServerContext* context, const v1::TasksRequest*,
                     v1::TasksReply* reply) override;

  // This agent's part of a control-tree message (daemon/tree/tree_node.h).
  v1::TreeReply tree_part(const v1::TreeBody& body);

  static constexpr int kMaxLaunchBatch = 1024;

 private:
  // Checks a launch of nodes this agent serves and hands its tasks to the launcher; with `wait`,
  // returns once they have started (direct calls), else at once (the tree).
  // Starts the tasks of the request's nodes that this agent serves; `here` (when given) is set to
  // how many those are once the request is found valid (0: none, refused as such).
  grpc::Status launch(const v1::LaunchRequest& request, bool wait, int* here = nullptr);
  // A signal to a job's tasks here; the count is added to `reply`.
  grpc::Status signal(const v1::SignalRequest& request, v1::TreeReply& reply);
  // A step's PMI exchange (daemon/pmi_tree_link.h): a child's contribution, or every node's
  // from the root; a refusal is added to `reply`'s errors.
  void pmi_exchange(const v1::PmiExchange& op, v1::TreeReply& reply);
  grpc::Status authorize(const grpc::ServerContext& context) const;

  Agent& agent_;
};

}  // namespace trellis
