// TreeNode: an agent's handling of a control-tree message (Agent.Tree). It checks the message
// (daemon/tree/tree_auth.h: signature, session, replay), finds its own place in the message's
// tree (daemon/tree/tree_shape.h), forwards the signed bytes untouched to its children in parallel
// (daemon/tree/tree_channel.h), does its own part meanwhile and answers, once the children have,
// with their replies folded into its own (daemon/tree/tree_reply.h), signed. No thread waits for
// the children: whichever comes last, the node's own part or a child's answer (on the channel's
// poll thread that read it), folds the replies and sends the answer.
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
//   channel.listen_async(host, 0, [&](const v1::TreeMessage& m, const std::string& raw,
//                                     TreeChannel::Respond respond) {
//     node.handle(m, raw, std::move(respond));
//   });
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

  // Takes `message` (`raw`: its bytes as they came, forwarded untouched) and answers it through
  // `respond`: before returning when this agent is a leaf or its children answered first,
  // otherwise from the thread that completes the last child's answer.
  void handle(const v1::TreeMessage& message, const std::string& raw, TreeChannel::Respond respond);

  const std::string& self() const { return self_; }

 private:
  std::string self_;
  TreeVerifier& verifier_;
  TreeChannel& channel_;
  Part part_;
};

}  // namespace trellis
