// The shape of the control tree: one k-ary tree over an ordered list of agents, the same for every
// message that goes down it (launches, signals, gang switches, liveness pings) and for the
// exchanges of a job's agents (the PMI barrier of a job step).
//
// The first agent of the list is the root. The rest is split into at most `fanout` consecutive
// runs of nearly equal length (the first ones one longer); the first agent of each run is a child
// of the root and the rest of the run is that child's subtree, split the same way. A tree of n
// agents is about log_fanout(n) levels deep, and consecutive agents (agents in node order serve
// neighbouring nodes) share subtrees. Every agent can work out its own place from the list alone,
// so a message carries only the list.
//
//   std::vector<TreeChild> children = tree_children({agents.begin() + 1, agents.end()}, 16);
//   std::optional<TreePosition> me = tree_position(agents, 16, "10.0.0.7:6818");
//   me->parent;    // "" at the root
//   me->children;  // who to send to, and the subtree each passes it on to
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trellis {

// The limits every tree keeps (a message beyond them is refused).
constexpr int kMaxTreeFanout = 64;
constexpr int kMaxTreeAgents = 100000;

// A child of an agent, and the agents below it.
struct TreeChild {
  std::string agent;
  std::vector<std::string> subtree;
};

// The children of an agent whose subtree (the agents below it, in order) is `subtree`.
std::vector<TreeChild> tree_children(const std::vector<std::string>& subtree, int fanout);

// Where an agent is in the tree over `agents` (agents[0] is the root).
struct TreePosition {
  int depth = 0;       // 0 at the root
  std::string parent;  // "" at the root
  std::vector<TreeChild> children;
};
// `me`'s position, or nothing when it is not in the list (its first occurrence counts).
std::optional<TreePosition> tree_position(const std::vector<std::string>& agents, int fanout,
                                          std::string_view me);

// The number of levels of the tree over `agents` agents (1 for a lone root; 0 for none).
int tree_levels(size_t agents, int fanout);

// The names the gang switch tree had before it became the control tree; code written against
// them (daemon/switch_node.h included) keeps building while it moves to the ones above.
using SwitchChild = TreeChild;
inline std::vector<TreeChild> switch_children(const std::vector<std::string>& subtree, int fanout) {
  return tree_children(subtree, fanout);
}

}  // namespace trellis
