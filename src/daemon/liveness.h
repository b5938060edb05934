// Liveness: what the scheduling controller knows of its agents' health. The controller pings its
// agents down the control tree (one message to all of them, every ping interval: each agent
// answers for its subtree, daemon/tree/tree_node.h), and each round's outcome comes here. Two
// levels, as Slurm (NOT_RESPONDING, then DOWN) and Flux (lost, then offline) have:
//
//   unresponsive  it missed `misses` rounds in a row: its nodes get no new job (their jobs keep
//                 running; nothing is taken from anyone yet);
//   down          unresponsive, it missed 2 x `misses` rounds in a row, and a direct probe (a
//                 ping to it alone, with a longer deadline) found no answer after it became
//                 unresponsive: its nodes are declared down and their jobs acted on.
//
// Rounds count, not time: a controller that could not ping for a while (stopped, starved of CPU,
// its host stalled) holds no round against anyone, so it never declares a node down because it
// was slow itself. An agent heard again is responsive at once.
//
// Its own lock, never the controller's: the ping thread never waits behind a scheduling pass.
//
//   liveness.add("10.0.0.7:41234", {0, 1, 2});   // registered: nodes 0-2
//   ... every interval: agents(), then round(pinged, failed, now) ...
//   for (const std::string& a : to_probe()) probed(a, answered, why, now);
//   for (const Liveness::Change& c : take_changes()) ...   // the controller acts on them
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/node_set.h"

namespace trellis {

class Liveness {
 public:
  explicit Liveness(int misses = 3) : misses_(misses) {}

  // An agent registered for `nodes` (node ids): it is responsive, heard `now`. A node registered
  // elsewhere before moves to it.
  void add(const std::string& agent, const std::vector<NodeId>& nodes, Seconds now);
  // Forgets every agent (a controller that lost the scheduler lease, or rebuilt).
  void clear();

  // The agents to ping, in node order (each by its first node), and those of them asked to
  // register again (their nodes are down while they answer).
  std::vector<std::string> agents() const;
  std::vector<std::string> registration_wanted(Seconds now);
  // Asks `agent` to register again in the next pings (at most every two seconds), until it does.
  void want_registration(const std::string& agent);

  // One ping round: every agent of `pinged` answered but those of `failed`.
  void round(const std::vector<std::string>& pinged, const std::vector<std::string>& failed,
             Seconds now);
  // The unresponsive agents to probe directly, and what the probe found.
  std::vector<std::string> to_probe() const;
  void probed(const std::string& agent, bool answered, const std::string& why, Seconds now);

  // What changed since the last call, for the controller to act on.
  struct Change {
    enum class Kind { kUnresponsive, kResponsive, kDown };
    Kind kind;
    std::string agent;
    std::vector<NodeId> nodes;
    std::string why;  // for a kDown: the last heard, the rounds missed, what the probe found
  };
  std::vector<Change> take_changes();

  // Whether `agent` is one this liveness pings (it registered here, or was added).
  bool knows(const std::string& agent) const;
  // When `agent` was last heard (0: never).
  Seconds last_heard(const std::string& agent) const;
  // Every agent and when it was last heard (for the store's display of it).
  std::map<std::string, std::pair<std::vector<NodeId>, Seconds>> heard() const;

 private:
  struct Agent {
    std::vector<NodeId> nodes;
    Seconds last_heard = 0;
    int missed = 0;  // rounds in a row
    bool unresponsive = false;
    bool probe_due = false;  // unresponsive, not yet probed since
    bool probe_failed = false;
    std::string probe_error;
    bool down = false;  // declared: no change is reported until it answers again
    Seconds registration_asked = 0;
    bool registration_wanted = false;
  };
  void heard(Agent& agent, const std::string& name, Seconds now);

  const int misses_;
  mutable std::mutex mutex_;
  std::map<std::string, Agent> agents_;  // guarded by mutex_
  std::vector<Change> changes_;          // guarded by mutex_
};

}  // namespace trellis
