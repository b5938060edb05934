#include "alloc/locality_metrics.h"

#include <vector>

#include "alloc/linear/ring_packing.h"

namespace trellis {

int curve_span(const Curve& curve, const NodeSet& nodes) {
  return trellis::curve_span(curve.to_ranks(nodes).to_vector(), curve.size(),
                             curve.closes_into_ring());
}

int contiguous_runs(const Curve& curve, const NodeSet& nodes) {
  return static_cast<int>(free_intervals(curve.to_ranks(nodes), curve.closes_into_ring()).size());
}

int leaf_switches_spanned(const FatTree& tree, const NodeSet& nodes) {
  int count = 0, last = -1;
  nodes.for_each([&](NodeId id) {  // ids ascend, and a leaf switch holds a contiguous id range
    int leaf = tree.leaf_switch(id);
    if (leaf != last) ++count;
    last = leaf;
  });
  return count;
}

namespace {

long pairs(long n) {
  return n * (n - 1) / 2;
}

}  // namespace

long sum_pairwise_hops(const FatTree& tree, const NodeSet& nodes) {
  // within[l] = pairs under one level-l switch; pairs whose lowest common switch is at level l
  // number within[l] - within[l-1] and cost 2l-1 hops each.
  std::vector<long> within(tree.levels() + 1, 0);
  for (int level = 1; level <= tree.levels(); ++level) {
    long run = 0;
    int current = -1;
    nodes.for_each([&](NodeId id) {
      int s = tree.switch_of(id, level);
      if (s != current) {
        within[level] += pairs(run);
        run = 0;
        current = s;
      }
      ++run;
    });
    within[level] += pairs(run);
  }
  long hops = 0;
  for (int level = 1; level <= tree.levels(); ++level)
    hops += (2L * level - 1) * (within[level] - within[level - 1]);
  return hops;
}

}  // namespace trellis
