#include "alloc/metrics.h"

#include <algorithm>
#include <utility>
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

// Sum over unordered pairs of |a - b| (or, on a ring of `extent` positions, the shorter way
// round) for the positions `at` with multiplicities `count`, sorted by position. Linear in the
// number of distinct positions, so a job on a 4096-wide axis costs what its own nodes cost, not
// 4096^2 (the quadratic form made `trellis sim` stall on torus:4096x4096).
double axis_pair_sum(const std::vector<std::pair<int, long>>& positions, int extent, bool ring) {
  double total = 0;
  // Prefix sums over the positions before j: count and count * position.
  double count_before = 0, weighted_before = 0;
  // On a ring, the positions i < j with at[j] - at[i] > extent / 2 go the other way round:
  // distance extent - (at[j] - at[i]). They are a prefix [0, near) of the positions before j.
  size_t near = 0;
  double far_count = 0, far_weighted = 0;
  for (size_t j = 0; j < positions.size(); ++j) {
    auto [at, count] = positions[j];
    if (ring) {
      while (near < j && 2 * (at - positions[near].first) > extent) {
        far_count += positions[near].second;
        far_weighted += static_cast<double>(positions[near].second) * positions[near].first;
        ++near;
      }
    }
    double close_count = count_before - far_count, close_weighted = weighted_before - far_weighted;
    double sum = at * close_count - close_weighted;                        // at - a over close ones
    sum += (extent - static_cast<double>(at)) * far_count + far_weighted;  // extent - (at - a)
    total += static_cast<double>(count) * sum;
    count_before += count;
    weighted_before += static_cast<double>(count) * at;
  }
  return total;
}

// Sum over unordered pairs of the hop distance on a mesh/torus, axis by axis. Called once per
// started job by the simulator, so it allocates a few buffers per call, not one per axis or node.
double torus_pair_sum(const Torus& machine, const NodeSet& nodes) {
  const int dims = machine.dims();
  const size_t n = static_cast<size_t>(nodes.count());
  std::vector<int> coords;  // node i's coordinate on axis k at i * dims + k
  coords.reserve(n * static_cast<size_t>(dims));
  nodes.for_each([&](NodeId id) {
    Coords c = machine.coords(id);
    for (int k = 0; k < dims; ++k) coords.push_back(c[k]);
  });
  double total = 0;
  std::vector<int> axis(n);
  std::vector<long> histogram;
  std::vector<std::pair<int, long>> positions;
  positions.reserve(n);
  for (int k = 0; k < dims; ++k) {
    positions.clear();
    const int extent = machine.extent(k);
    for (size_t i = 0; i < n; ++i) axis[i] = coords[i * static_cast<size_t>(dims) + k];
    if (n >= static_cast<size_t>(extent)) {  // dense: count per position
      histogram.assign(static_cast<size_t>(extent), 0);
      for (int x : axis) ++histogram[x];
      for (int x = 0; x < extent; ++x)
        if (histogram[x]) positions.emplace_back(x, histogram[x]);
    } else {  // sparse: sort the job's own positions
      std::sort(axis.begin(), axis.end());
      for (int x : axis) {
        if (positions.empty() || positions.back().first != x)
          positions.emplace_back(x, 1);
        else
          ++positions.back().second;
      }
    }
    total += axis_pair_sum(positions, extent, machine.wraps(k));
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
