#include "alloc/metrics.h"

#include <vector>

#include "alloc/contiguous/box_search.h"

namespace trellis {

std::optional<Box> largest_free_box(const Torus& machine, const NodeSet& free, PlacementMode mode) {
  return make_production_search(machine)->largest_free_box(free, mode);
}

int free_node_count(const NodeSet& free) {
  return free.count();
}

namespace {

// Sum over unordered pairs of the hop distance on a mesh/torus, axis by axis.
double torus_pair_sum(const Torus& machine, const NodeSet& nodes) {
  const int dims = machine.dims();
  std::vector<std::vector<long>> histogram(dims);
  for (int k = 0; k < dims; ++k) histogram[k].assign(machine.extent(k), 0);
  nodes.for_each([&](NodeId id) {
    Coords c = machine.coords(id);
    for (int k = 0; k < dims; ++k) ++histogram[k][c[k]];
  });
  double total = 0;
  for (int k = 0; k < dims; ++k) {
    const auto& h = histogram[k];
    const int n = machine.extent(k);
    for (int a = 0; a < n; ++a) {
      if (h[a] == 0) continue;
      for (int b = a + 1; b < n; ++b)
        if (h[b]) total += static_cast<double>(h[a]) * h[b] * machine.axis_distance(k, a, b);
    }
  }
  return total;
}

// Sum over unordered pairs of switch chips crossed on a fat tree (flat = one level).
double tree_pair_sum(const FatTree& tree, const NodeSet& nodes) {
  // pairs_within[L] = pairs whose nodes share a level-L switch (level 0: the same node: none).
  std::vector<double> pairs_within(tree.levels() + 1, 0);
  for (int level = 1; level <= tree.levels(); ++level) {
    std::vector<long> under(tree.switches_at(level), 0);
    nodes.for_each([&](NodeId id) { ++under[tree.switch_of(id, level)]; });
    for (long n : under) pairs_within[level] += static_cast<double>(n) * (n - 1) / 2;
  }
  double total = 0;
  for (int level = 1; level <= tree.levels(); ++level)
    total += (2.0 * level - 1) * (pairs_within[level] - pairs_within[level - 1]);
  return total;
}

}  // namespace

double average_pairwise_hops(const Machine& machine, const NodeSet& nodes) {
  const double n = nodes.count();
  if (n < 2) return 0;
  const double pairs = n * (n - 1) / 2;
  if (machine.torus()) return torus_pair_sum(*machine.torus(), nodes) / pairs;
  if (machine.fat_tree()) return tree_pair_sum(*machine.fat_tree(), nodes) / pairs;
  return 1;
}

}  // namespace trellis
