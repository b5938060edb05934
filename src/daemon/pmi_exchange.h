// PmiExchangeHub: an agent's part in the cross-node half of a step's PMI barriers (PMI-1 barriers
// and PMIx fences alike). Each barrier (a round: 1, 2, ... per step) is an allgather of the bytes
// every node's job shell contributes:
//   - this agent's shells of the step each contribute (shell_socket.h); one agent often serves
//     many emulated nodes, so their contributions are merged here first;
//   - the step's agents form a tree (daemon/exchange_tree.h, the control tree's shape) in node
//     order: once an agent has its own nodes' contributions and those of each child, it sends
//     the merge up to its parent (SendUp); the root, once its subtree is complete, has every
//     node's contributions and answers its shells and children with them, and hands them to
//     SendDown if set.
// Two ways for the answer to come down: the parent answers the child's contribution (each
// interior agent passes it on), or, on the control tree (daemon/pmi_tree_link.h), the root sends
// it down the step's whole tree at once (SendDown) and each agent gets it with deliver(); the
// children's answers are then not used.
// The bytes are only concatenated, never read: a concatenation of PMI-1 key-value records is
// one (shell/kv_records.h), and libpmix reads a concatenation of nodes' blobs.
//
// A contribution may arrive before the launch that says what the step's tree is (the agents get
// their launches in parallel): it waits, for at most kPlanTimeout. A step's state is dropped once
// its tasks here have ended (finished()), and every answer still owed then gets an error, so a
// barrier whose ranks died never leaves a caller waiting. A child agent may send the same
// contribution again (pmi_tree_link.h resends when its parent's answer is late): the same bytes
// are taken as the first copy, before the round completes or after. Thread-safe; answers are called
// without the hub's lock held, from whichever thread completed the round.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/result.h"
#include "daemon/exchange_tree.h"

namespace trellis {

struct StepKey {
  int64_t job = 0;
  int attempt = 0;
  int step = 0;
  auto operator<=>(const StepKey&) const = default;
  std::string name() const;  // "12.1.0" (job, attempt, step)
};

// What the launch says about a step, as far as the exchange needs it.
struct StepPlan {
  std::vector<std::string> agents;  // the step's agents in node order
  int fanout = 2;
  std::set<std::string> local_nodes;  // this agent's nodes in the step: one contribution each
  int uid = -1;                       // the step's user (shells must run as them)
};

class PmiExchangeHub {
 public:
  // How long a contribution waits for the launch that gives its step's plan.
  static constexpr std::chrono::seconds kPlanTimeout{120};

  using Answer = std::function<void(Result<std::string>)>;
  // Sends a subtree's merge to the parent agent; `done` gets the parent's answer or the error.
  using SendUp = std::function<void(const std::string& parent, const StepKey& step, uint32_t round,
                                    std::string data, Answer done)>;

  PmiExchangeHub(std::string self, SendUp send_up);
  // This agent's address, once known (before any launch reaches it).
  void set_self(std::string self);
  // Called (without the lock) when this agent, as the root of a step's tree, completes a
  // barrier: "pmi exchange: step 12.1.0 barrier 2 complete: 8 agents, tree height 3, 2304 bytes".
  void set_log(std::function<void(const std::string&)> log);

  // Sends a completed barrier's data from the root down the step's tree (see above).
  using SendDown = std::function<void(const StepKey& step, uint32_t round, const std::string& data,
                                      const StepPlan& plan)>;
  void set_send_down(SendDown send_down);
  // Every node's contributions to `round`, sent down from the root: answers the barrier here (a
  // round this agent has not sent up, or knows nothing of, is left alone).
  void deliver(const StepKey& step, uint32_t round, std::string data);

  // The launch of `step` on this agent (repeats are ignored).
  void expect(const StepKey& step, StepPlan plan);
  std::optional<StepPlan> plan(const StepKey& step) const;

  // Node `node` of this agent (from its shell) contributes to `round`.
  void contribute_local(const StepKey& step, uint32_t round, const std::string& node,
                        std::string data, Answer answer);
  // Child agent `from` contributes its subtree's merge to `round`.
  void contribute_child(const StepKey& step, uint32_t round, const std::string& from,
                        std::string data, Answer answer);

  // The step's tasks on this agent have all ended: answers owed get an error naming `why`.
  void finished(const StepKey& step, const std::string& why);
  // Fails the rounds that have waited longer than kPlanTimeout for their step's plan.
  void expire(std::chrono::steady_clock::time_point now);

  // The steps it keeps state for (launched here, or contributed to).
  std::vector<StepKey> steps() const;
  // Barriers completed here, for logs and tests.
  int64_t rounds_completed() const;

 private:
  struct Round {
    std::map<std::string, std::string> local;     // node -> its shell's bytes
    std::map<std::string, std::string> children;  // child address -> its subtree's bytes
    std::vector<Answer> answers;                  // owed once the round completes
    bool sent_up = false;
    std::chrono::steady_clock::time_point started;
  };
  struct Step {
    std::optional<StepPlan> plan;
    ExchangeTreePosition position;
    std::map<uint32_t, Round> rounds;
    uint32_t completed_through = 0;  // the highest round completed (or failed) here
  };
  using Deferred = std::vector<std::pair<Answer, Result<std::string>>>;

  void contribute(const StepKey& step, uint32_t round, bool local, const std::string& who,
                  std::string data, Answer answer);
  // Sends up or completes `round` if it has everything; called with mutex_ held.
  void advance(const StepKey& key, Step& step, uint32_t number, Deferred& later);
  void complete(const StepKey& key, uint32_t number, Result<std::string> all);
  static void run(Deferred& later);

  std::string self_;  // guarded by mutex_
  const SendUp send_up_;
  std::function<void(const std::string&)> log_;
  SendDown send_down_;
  mutable std::mutex mutex_;
  std::map<StepKey, Step> steps_;
  std::deque<StepKey> ended_;  // recently finished steps (late calls get an error), bounded
  int64_t rounds_completed_ = 0;
};

}  // namespace trellis
