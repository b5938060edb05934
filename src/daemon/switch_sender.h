// SwitchSender: how trellisd sends gang switches (daemon/switch_node.h) to its agents, through
// the control tree (daemon/tree/tree_sender.h). Switches go one at a time, in the order given (a
// job is frozen and thawed in the order the policy decided), from a thread of the sender's own so
// that a slow tree never holds a scheduling pass up. The first agent of an order is the root of
// the tree; the rest is its subtree.
//
// A dead agent in the middle of the tree costs one deadline, not the switch (the tree sends the
// subtree it did not reach again without it). Failed agents are kept out of the trees of the
// next `keep_out` seconds: a dead agent is not waited for at every switch while the liveness
// checks find it down.
//
//   SwitchSender sender(tree_sender, {.fanout = 16});
//   sender.on_done([](const SwitchOutcome& o) { ... });
//   sender.send(order);
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/agent_link.h"
#include "daemon/tree/tree_sender.h"
#include "trellis/v1/trellis.grpc.pb.h"

namespace trellis {

class SwitchSender {
 public:
  struct Options {
    int fanout = 16;
    double deadline_seconds = 1.0;  // for a whole tree
    double keep_out_seconds = 5.0;
  };
  // `tree` must outlive the sender.
  SwitchSender(TreeSender& tree, Options options);
  ~SwitchSender();  // sends nothing more; waits for the switch in flight
  SwitchSender(const SwitchSender&) = delete;
  SwitchSender& operator=(const SwitchSender&) = delete;

  void on_done(AgentLink::SwitchDone callback);
  void send(SwitchOrder order);
  // The switch in place of another (e.g. after a failed agent): what the tree reached plus the
  // resent part. Exposed for tests of the tree rebuild.
  v1::SwitchReply switch_through_tree(const SwitchOrder& order, std::vector<std::string> agents);

 private:
  void run();

  TreeSender& tree_;
  Options options_;
  AgentLink::SwitchDone done_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<SwitchOrder> queue_;
  bool stopping_ = false;
  std::map<std::string, std::chrono::steady_clock::time_point> kept_out_;  // agent -> until
  std::thread thread_;
};

}  // namespace trellis
