// PmiTreeLink: how the agents of a job step exchange its PMI barriers (daemon/pmi_exchange.h) on
// the control tree (daemon/tree/), so that there is one authenticated way between agents, not two.
//
//   - Up: an agent sends its subtree's contributions to its parent in the step's tree of agents as
//     a TreeBody pmi_exchange op to a tree of one (the parent); the parent's tree_part() hands it
//     to its hub and answers at once, so no tree worker ever waits for a barrier.
//   - Down: the root, once it has every node's contributions, sends them (complete = true) down
//     the tree over the step's agents, the same k-ary shape as the hub's (daemon/tree/
//     tree_shape.h); each agent's tree_part() gives them to its hub, which answers its shells.
//
// Sends run on a few threads of the link's own (TreeSender blocks until the tree answers), never
// on the thread that completed a barrier (a shell socket's, a tree worker). Each message has a
// deadline of kDeadlineSeconds for its whole tree; the agents that did not answer in time are
// sent it again, up to kAttempts sends in all (a host starved of CPU can delay one hop for
// seconds; the hub takes a repeat as the first copy). A parent that refuses, or still does not
// answer, fails the sender's barrier with the reason (its shells then end the step); agents that
// a down message could not reach are logged (their own steps end when their tasks do).
//
//   PmiTreeLink link(channel, credentials, daemon_uid, "10.0.0.7:41234");
//   link.send_up(parent, step, 3, bytes, [](const std::string& why) { fail the barrier });
//   link.send_down(step, 3, everything, plan.agents, plan.fanout);
//   link.stop();   // before the channel goes: later sends fail at once
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/auth.h"
#include "daemon/pmi_exchange.h"
#include "daemon/tree/tree_auth.h"
#include "daemon/tree/tree_channel.h"
#include "daemon/tree/tree_sender.h"
#include "trellis/v1/trellis.pb.h"

namespace trellis {

class PmiTreeLink {
 public:
  static constexpr int kSenders = 4;
  static constexpr double kDeadlineSeconds = 10;  // per attempt
  static constexpr int kAttempts = 3;             // sends to agents that did not answer

  using Failed = std::function<void(const std::string& why)>;

  // `channel` and `credentials` must outlive the link (or its stop()); `self` is this agent's
  // address in the trees; `deadline_seconds` is each send's (tests make it short).
  PmiTreeLink(TreeChannel& channel, const CredentialSource& credentials, int daemon_uid,
              std::string self, double deadline_seconds = kDeadlineSeconds);
  ~PmiTreeLink();  // stop()
  PmiTreeLink(const PmiTreeLink&) = delete;
  PmiTreeLink& operator=(const PmiTreeLink&) = delete;

  // Sends `data` (this agent's subtree's contributions to `round`) to `parent`; `failed` is called
  // once, on a sender thread, if the parent could not be reached or refused it.
  void send_up(const std::string& parent, const StepKey& step, uint32_t round, std::string data,
               Failed failed);
  // Sends every node's contributions to `round` down the tree over `agents` (this agent first).
  void send_down(const StepKey& step, uint32_t round, std::string data,
                 std::vector<std::string> agents, int fanout);

  // Sends still queued are dropped (an up send's `failed` is called), later ones fail at once;
  // returns once the sends under way have ended (each within its deadline). Idempotent.
  void stop();

  // The op for a message (also what tree_part() reads).
  static v1::PmiExchange op(const StepKey& step, uint32_t round, const std::string& from,
                            std::string data, bool complete);

 private:
  struct Send {
    v1::TreeBody body;
    std::vector<std::string> agents;
    int fanout = 1;
    Failed failed;  // up sends only
  };
  void queue(Send send);
  void run();
  void deliver(Send& send);
  bool stopping();
  static void fail_send(Send& send, const std::string& what, const std::string& why);

  TreeSigner signer_;
  TreeSender sender_;
  std::string self_;
  const double deadline_seconds_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Send> queue_;  // guarded by mutex_
  bool stopping_ = false;   // guarded by mutex_
  std::vector<std::thread> threads_;
};

}  // namespace trellis
