// TreeNode: an agent's handling of a control-tree message (Agent.Tree). It checks the message
// (daemon/tree/tree_auth.h: signature, session, replay), finds its own place in the message's
// tree (daemon/tree/tree_shape.h), forwards the signed bytes untouched to its children in parallel
// (daemon/tree/tree_channel.h), does its own part meanwhile, waits for the children and answers
// with their replies folded into its own (daemon/tree/tree_reply.h), signed.
//
// Deadlines: the sender gives the root the tree's whole deadline D (TreeBody.deadline_seconds);
// an agent at depth d gives its children D * 0.75^(d+1) from when it got the message, so that a
// child answers, its own children's failures included, before its parent stops waiting for it.
// A child that does not answer in time, or whose answer is not signed with the session's key, is
// reported as failed with the subtree it should have passed the message to (unreached).
//
// A hostile or malformed message gets an error naming what is wrong (UNAUTHENTICATED for a bad
// signature or a replay, INVALID_ARGUMENT for a malformed body or a tree this agent is not in),
// is never forwarded, and never stops the agent.
//
//   TreeNode node(address, verifier, channel, [&](const v1::TreeBody& body) {
//     return do_my_part(body);   // a TreeReply with agents = 1 and the op's result
//   });
//   grpc::Status Tree(..., const v1::TreeMessage* m, v1::TreeAnswer* a) { return node.handle(*m,
//   a); }
#pragma once

#include <functional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "daemon/tree/tree_auth.h"
#include "daemon/tree/tree_channel.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

class TreeNode {
 public:
  // This agent's part of a message, run on the calling thread while the children work.
  using Part = std::function<v1::TreeReply(const v1::TreeBody& body)>;

  // `self` is this agent's address as the controllers know it (how it appears in trees);
  // `verifier` and `channel` must outlive the node.
  TreeNode(std::string self, TreeVerifier& verifier, TreeChannel& channel, Part part);

  grpc::Status handle(const v1::TreeMessage& message, v1::TreeAnswer* answer);

  const std::string& self() const { return self_; }

 private:
  std::string self_;
  TreeVerifier& verifier_;
  TreeChannel& channel_;
  Part part_;
};

}  // namespace trellis
