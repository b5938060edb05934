// MC1x1: seed 004's MC allocation on a 2-D or 3-D grid (digest 4.10, 8 A-13).
//
// Every free node is a candidate centre. Shell r around a centre is the nodes at L-infinity
// distance exactly r (the centre is shell 0, then the 3x3x3 cube's surface, then 5x5x5 ...).
// Free nodes are taken from the inner shells outwards until the job has enough; the cost of a
// centre is the sum of the shell indices of the nodes taken. The cheapest centre wins; ties go
// to the centre with the smallest snake rank (the routing-derived number line). Inside the last,
// partly used shell, nodes are taken by (L1 distance to the centre, snake rank).
//
// Shells are clipped at the grid's faces. With option wrap=yes, the machine's wrapping axes
// measure distance the short way round instead (Red Storm's z). Counting uses prefix sums over
// the free set (alloc/mc/free_prefix_sums.h): O(1) per shell, so a decision on 10,368 nodes
// costs O(free nodes x radius) lookups.
//
// Registered as "mc1x1" for meshes and tori of 1 to 3 axes.
#pragma once

#include <vector>

#include "alloc/allocator.h"

namespace trellis {

// The cost of taking take[r] nodes from shell r: sum of r * take[r] (the patent's arithmetic).
long mc_cost(const std::vector<int>& takes_per_shell);

class Mc1x1Allocator : public Allocator {
 public:
  Mc1x1Allocator(const Machine& machine, bool wrap);
  std::string_view name() const override { return "mc1x1"; }
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override;

  struct Choice {
    NodeId centre = -1;
    long cost = 0;
    int radius = 0;  // the outermost shell used
  };
  // The winning centre for a job of k nodes (requires at least k free).
  Choice best_centre(const NodeSet& free, int k) const;
  // Free nodes in shells 0..max_radius around `centre`.
  std::vector<int> shell_counts(const NodeSet& free, NodeId centre, int max_radius) const;

 private:
  int linf(const Coords& a, const Coords& b) const;
  int l1(const Coords& a, const Coords& b) const;

  bool wrap_;
  std::array<bool, 3> wraps_{false, false, false};  // axes measured round the wrap
  std::vector<int> snake_rank_;                     // node id -> snake rank
  std::vector<NodeId> by_snake_;                    // snake rank -> node id
};

}  // namespace trellis
