#include "daemon/tree/tree_node.h"

#include <memory>
#include <mutex>
#include <vector>

#include "daemon/tree/tree_reply.h"
#include "daemon/tree/tree_shape.h"

namespace trellis {
namespace {

// One message's answer in the making: the node's own reply and its children's, folded and sent
// by whichever of them comes last.
struct Gathering {
  Gathering(TreeSessionKey session, const v1::TreeAuth& auth, std::vector<TreeChild> children,
            TreeChannel::Respond respond)
      : session(std::move(session)),
        auth(auth),
        children(std::move(children)),
        replies(this->children.size()),
        left(this->children.size() + 1),
        respond(std::move(respond)) {}

  // Takes one reply (`child` = -1: the node's own); the last one in answers.
  void take(int child, v1::TreeReply reply) {
    {
      std::lock_guard lock(mutex);
      if (child < 0)
        own = std::move(reply);
      else
        replies[static_cast<size_t>(child)] = std::move(reply);
      if (--left > 0) return;
    }
    for (const v1::TreeReply& from_child : replies) merge_tree_reply(from_child, own);
    v1::TreeAnswer answer;
    answer.set_body(own.SerializeAsString());
    answer.set_mac(sign_answer(session, auth, answer.body()));
    respond(grpc::Status::OK, answer);
  }

  const TreeSessionKey session;
  const v1::TreeAuth auth;  // the message's, which the children's answers are bound to
  const std::vector<TreeChild> children;
  std::mutex mutex;  // guards what follows
  std::vector<v1::TreeReply> replies;
  v1::TreeReply own;
  size_t left;  // replies still to come, the node's own included
  TreeChannel::Respond respond;
};

}  // namespace

TreeNode::TreeNode(std::string self, TreeVerifier& verifier, TreeChannel& channel, Part part)
    : self_(std::move(self)), verifier_(verifier), channel_(channel), part_(std::move(part)) {}

void TreeNode::handle(const v1::TreeMessage& message, const std::string& raw,
                      TreeChannel::Respond respond) {
  const auto received = std::chrono::system_clock::now();
  Result<TreeSessionKey> key = verifier_.verify(message);
  if (!key) {
    respond(grpc::Status(key.error().code == Error::Code::kUnavailable
                             ? grpc::StatusCode::UNAVAILABLE
                             : grpc::StatusCode::UNAUTHENTICATED,
                         key.error().message),
            {});
    return;
  }
  // The body (64 agents' addresses for a 64-agent tree) is parsed into an arena on the stack:
  // its strings cost no allocation of their own.
  alignas(8) char first_block[8192];
  google::protobuf::ArenaOptions options;
  options.initial_block = first_block;
  options.initial_block_size = sizeof first_block;
  google::protobuf::Arena arena(options);
  v1::TreeBody& body = *google::protobuf::Arena::CreateMessage<v1::TreeBody>(&arena);
  if (!body.ParseFromString(message.body())) {
    respond(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "body: not a TreeBody"), {});
    return;
  }
  if (Status ok = check_tree_body(body); !ok) {
    respond(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, ok.error().message), {});
    return;
  }
  std::optional<TreePosition> position = tree_position(
      std::vector<std::string>(body.agents().begin(), body.agents().end()), body.fanout(), self_);
  if (!position) {
    respond(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                         "agents: this agent (" + self_ + ") is not in the message's tree"),
            {});
    return;
  }

  // The children first, so that the tree's depth costs its round trips only once.
  const size_t count = position->children.size();
  double budget = body.deadline_seconds() * 0.75;
  for (int d = 0; d < position->depth; ++d) budget *= 0.75;
  const auto deadline = received + std::chrono::microseconds(static_cast<int64_t>(budget * 1e6));
  auto gathering = std::make_shared<Gathering>(std::move(*key), message.auth(),
                                               std::move(position->children), std::move(respond));
  for (size_t i = 0; i < count; ++i) {
    channel_.send_serialized(
        gathering->children[i].agent, raw, deadline,
        [gathering, i](const grpc::Status& status, const v1::TreeAnswer& child_answer) {
          const TreeChild& child = gathering->children[i];
          v1::TreeReply reply;
          if (!status.ok()) {
            reply = lost_subtree(child.agent, child.subtree, status.error_message());
          } else if (!answer_is_signed(gathering->session, gathering->auth, child_answer)) {
            reply = lost_subtree(child.agent, child.subtree,
                                 "its answer is not signed with the session's key");
          } else if (!reply.ParseFromString(child_answer.body())) {
            reply = lost_subtree(child.agent, child.subtree, "its answer is malformed");
          }
          gathering->take(static_cast<int>(i), std::move(reply));
        });
  }
  gathering->take(-1, part_(body));
}

}  // namespace trellis
