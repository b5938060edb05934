// TreeSender: how a message goes to many agents through the control tree, from whoever starts it
// (a controller's launches, signals, gang switches and liveness pings; an agent's call to one
// other agent is a tree of one). The body is signed once (daemon/tree/tree_auth.h) and sent to
// the first agent of the list, which forwards it down the k-ary tree over the list
// (daemon/tree/tree_node.h).
//
// A child that does not answer costs one deadline, not the message: its subtree is reported as
// unreached and sent again at once in a new tree without the failed agents, until a round has no
// failure (each round drops its failed agents, so this ends). The reply holds every reached
// agent's part folded together, and the agents that never answered in `failed`.
//
//   TreeSender sender(signer, channel, "controller host:1234");
//   v1::TreeBody body;
//   *body.mutable_signal() = request;
//   v1::TreeReply reply = sender.send(body, agents, {.fanout = 16, .deadline_seconds = 5});
//
// Thread-safe: messages to different trees may be sent from several threads at once.
#pragma once

#include <string>
#include <vector>

#include "daemon/tree/tree_auth.h"
#include "daemon/tree/tree_channel.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

class TreeSender {
 public:
  struct Options {
    int fanout = 16;
    double deadline_seconds = 5;  // for each round's whole tree
  };
  // `signer` and `channel` must outlive the sender; `origin` names it in the agents' logs.
  TreeSender(TreeSigner& signer, TreeChannel& channel, std::string origin);

  // Sends `body` (its op set; its agents, fanout and deadline are set here) to `agents`.
  v1::TreeReply send(v1::TreeBody body, std::vector<std::string> agents, Options options);
  // One tree, no second round: for tests of the rebuild, and to time one tree.
  v1::TreeReply send_once(v1::TreeBody body, const std::vector<std::string>& agents,
                          Options options);

 private:
  TreeSigner& signer_;
  TreeChannel& channel_;
  std::string origin_;
};

}  // namespace trellis
