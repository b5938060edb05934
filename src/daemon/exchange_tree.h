// Where an agent sits in the tree of a step's agents for the PMI exchange (daemon/pmi_exchange.h):
// the control tree's shape (daemon/tree/tree_shape.h) over the agents in node order, so that the
// tree a barrier's data goes up and the tree it comes down (daemon/pmi_tree_link.h) are one. The
// tree is about log_fanout(agents) deep, so a barrier costs that many hops up and as many down,
// whatever the number of nodes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace trellis {

struct ExchangeTreePosition {
  bool member = false;                // `self` is one of the agents
  std::optional<std::string> parent;  // none for the root
  std::vector<std::string> children;
  int depth = 0;   // levels below the root to this agent (root: 0)
  int height = 0;  // levels of the whole tree (one agent: 0)
};

ExchangeTreePosition exchange_tree_position(const std::vector<std::string>& agents,
                                            const std::string& self, int fanout);

}  // namespace trellis
