#include "daemon/tree/tree_node.h"

#include <condition_variable>
#include <mutex>
#include <vector>

#include "daemon/tree/tree_reply.h"
#include "daemon/tree/tree_shape.h"

namespace trellis {

TreeNode::TreeNode(std::string self, TreeVerifier& verifier, TreeChannel& channel, Part part)
    : self_(std::move(self)), verifier_(verifier), channel_(channel), part_(std::move(part)) {}

grpc::Status TreeNode::handle(const v1::TreeMessage& message, v1::TreeAnswer* answer) {
  const auto received = std::chrono::system_clock::now();
  Result<TreeSessionKey> key = verifier_.verify(message);
  if (!key)
    return grpc::Status(key.error().code == Error::Code::kUnavailable
                            ? grpc::StatusCode::UNAVAILABLE
                            : grpc::StatusCode::UNAUTHENTICATED,
                        key.error().message);
  // The body (64 agents' addresses for a 64-agent tree) is parsed into an arena on the stack:
  // its strings cost no allocation of their own.
  alignas(8) char first_block[8192];
  google::protobuf::ArenaOptions options;
  options.initial_block = first_block;
  options.initial_block_size = sizeof first_block;
  google::protobuf::Arena arena(options);
  v1::TreeBody& body = *google::protobuf::Arena::CreateMessage<v1::TreeBody>(&arena);
  if (!body.ParseFromString(message.body()))
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "body: not a TreeBody");
  if (Status ok = check_tree_body(body); !ok)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, ok.error().message);
  std::optional<TreePosition> position = tree_position(
      std::vector<std::string>(body.agents().begin(), body.agents().end()), body.fanout(), self_);
  if (!position)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "agents: this agent (" + self_ + ") is not in the message's tree");

  // The children first, so that the tree's depth costs its round trips only once.
  const size_t count = position->children.size();
  std::vector<v1::TreeReply> replies(count);
  std::mutex mutex;
  std::condition_variable all_in;
  size_t answered = 0;
  double budget = body.deadline_seconds() * 0.75;
  for (int d = 0; d < position->depth; ++d) budget *= 0.75;
  const auto deadline = received + std::chrono::microseconds(static_cast<int64_t>(budget * 1e6));
  const TreeSessionKey& session = *key;
  const std::string serialized = count > 0 ? message.SerializeAsString() : std::string();
  for (size_t i = 0; i < count; ++i) {
    const TreeChild& child = position->children[i];
    channel_.send_serialized(
        child.agent, serialized, deadline,
        [&, i](const grpc::Status& status, const v1::TreeAnswer& child_answer) {
          v1::TreeReply reply;
          if (!status.ok()) {
            reply = lost_subtree(child.agent, child.subtree, status.error_message());
          } else if (!answer_is_signed(session, message.auth(), child_answer)) {
            reply = lost_subtree(child.agent, child.subtree,
                                 "its answer is not signed with the session's key");
          } else if (!reply.ParseFromString(child_answer.body())) {
            reply = lost_subtree(child.agent, child.subtree, "its answer is malformed");
          }
          std::lock_guard lock(mutex);
          replies[i] = std::move(reply);
          if (++answered == count) all_in.notify_all();
        });
  }

  v1::TreeReply reply = part_(body);
  {
    std::unique_lock lock(mutex);
    all_in.wait(lock, [&] { return answered == count; });
  }
  for (const v1::TreeReply& child : replies) merge_tree_reply(child, reply);
  answer->set_body(reply.SerializeAsString());
  answer->set_mac(sign_answer(session, message.auth(), answer->body()));
  return grpc::Status::OK;
}

}  // namespace trellis
