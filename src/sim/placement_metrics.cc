#include "sim/placement_metrics.h"

#include <unordered_map>
#include <vector>

namespace trellis {

namespace {

double torus_pair_hop_sum(const Torus& torus, const NodeSet& nodes) {
  // The L1 distance splits by axis: for each axis, the sum over pairs of the axis distance follows
  // from how many nodes sit at each coordinate.
  double total = 0;
  std::vector<std::vector<double>> at(torus.dims());
  for (int a = 0; a < torus.dims(); ++a) at[a].assign(torus.extent(a), 0);
  nodes.for_each([&](NodeId id) {
    Coords c = torus.coords(id);
    for (int a = 0; a < torus.dims(); ++a) at[a][c[a]] += 1;
  });
  for (int a = 0; a < torus.dims(); ++a) {
    const auto& count = at[a];
    for (int x = 0; x < torus.extent(a); ++x) {
      if (count[x] == 0) continue;
      for (int y = x + 1; y < torus.extent(a); ++y)
        if (count[y] != 0) total += count[x] * count[y] * torus.axis_distance(a, x, y);
    }
  }
  return total;
}

double tree_pair_hop_sum(const FatTree& tree, const NodeSet& nodes) {
  // Pairs under a common switch of level l, for each l; a pair whose lowest common switch is at
  // level l crosses 2l-1 switch chips.
  double total = 0;
  double below = 0;  // pairs already counted at lower levels
  for (int level = 1; level <= tree.levels(); ++level) {
    std::unordered_map<int, double> per_switch;
    nodes.for_each([&](NodeId id) { per_switch[tree.switch_of(id, level)] += 1; });
    double pairs = 0;
    for (const auto& [sw, n] : per_switch) pairs += n * (n - 1) / 2;
    total += (pairs - below) * (2 * level - 1);
    below = pairs;
  }
  return total;
}

}  // namespace

double average_pairwise_hops(const Machine& machine, const NodeSet& nodes) {
  double n = nodes.count();
  if (n < 2) return 0;
  double sum = machine.torus() ? torus_pair_hop_sum(*machine.torus(), nodes)
                               : tree_pair_hop_sum(*machine.fat_tree(), nodes);
  return sum / (n * (n - 1) / 2);
}

std::optional<int> leaf_switches_spanned(const Machine& machine, const NodeSet& nodes) {
  const FatTree* tree = machine.fat_tree();
  if (!tree) return std::nullopt;
  int spanned = 0;
  int last = -1;
  nodes.for_each([&](NodeId id) {  // ids under one leaf are consecutive, so runs suffice
    int leaf = tree->leaf_switch(id);
    if (leaf != last) ++spanned, last = leaf;
  });
  return spanned;
}

}  // namespace trellis
