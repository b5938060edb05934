#include "alloc/most_compact.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "alloc/metrics.h"
#include "core/request.h"

namespace trellis {
namespace {

// n nodes of the box at the origin with `extents`: whole slabs across the longest axis (ties:
// the higher axis), then the rest as one partial slab filled row by row and centred in the slab,
// so that the remainder sits over the middle of the slabs rather than in a corner.
NodeSet fill_box(const Torus& torus, const std::vector<int>& extents, int n) {
  const int dims = torus.dims();
  std::vector<int> order(static_cast<size_t>(dims));  // fastest axis first
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return extents[a] < extents[b]; });
  const int slowest = order.back();
  const int slab = static_cast<int>(shape_volume(extents) / extents[slowest]);
  const int whole = n / slab, rest = n % slab;
  NodeSet nodes(torus.node_count());
  Coords c{};
  for (int placed = 0; placed < whole * slab; ++placed) {
    nodes.set(torus.id(c));
    for (int axis : order) {  // a mixed-radix counter, fastest axis first
      if (++c[axis] < extents[axis]) break;
      c[axis] = 0;
    }
  }
  // The partial slab: row-major over the axes but the slowest, each axis's used range centred.
  std::vector<int> inner(static_cast<size_t>(dims), 1);  // the partial slab's box
  {
    int remaining = rest, stride = 1;
    for (int i = 0; i + 1 < dims; ++i) {
      const int axis = order[i];
      inner[axis] = remaining == 0 ? 1 : std::min(extents[axis], (remaining + stride - 1) / stride);
      stride *= extents[axis];
    }
  }
  Coords at{};
  at[slowest] = whole;
  for (int placed = 0; placed < rest; ++placed) {
    Coords shifted = at;
    for (int i = 0; i + 1 < dims; ++i) {
      const int axis = order[i];
      shifted[axis] += (extents[axis] - inner[axis]) / 2;
    }
    nodes.set(torus.id(shifted));
    for (int i = 0; i + 1 < dims; ++i) {
      const int axis = order[i];
      if (++at[axis] < extents[axis]) break;
      at[axis] = 0;
    }
  }
  return nodes;
}

void for_each_box_shape(const Torus& torus, int n, std::vector<int>& extents, int axis, long volume,
                        const auto& visit) {
  if (axis == torus.dims()) {
    const int longest = *std::max_element(extents.begin(), extents.end());
    // At most one partial slab: fewer than volume / longest nodes left empty.
    if (volume >= n && (volume - n) * longest < volume) visit(extents);
    return;
  }
  long rest = 1;  // the largest volume the remaining axes can add
  for (int k = axis + 1; k < torus.dims(); ++k) rest *= torus.extent(k);
  for (int e = 1; e <= torus.extent(axis); ++e) {
    if (volume * e * rest < n) continue;       // too small whatever the rest
    if (volume * e >= 2L * n && e > 1) break;  // a slab would be left empty at least
    extents[axis] = e;
    for_each_box_shape(torus, n, extents, axis + 1, volume * e, visit);
  }
}

}  // namespace

NodeSet most_compact_nodes(const Machine& machine, int n) {
  if (n < 1 || n > machine.node_count())
    throw std::invalid_argument("most_compact_nodes: " + std::to_string(n) + " nodes on " +
                                std::to_string(machine.node_count()));
  if (const Torus* torus = machine.torus()) {
    std::vector<int> extents(static_cast<size_t>(torus->dims()), 1);
    std::vector<int> best;
    double best_hops = std::numeric_limits<double>::infinity();
    for_each_box_shape(*torus, n, extents, 0, 1, [&](const std::vector<int>& shape) {
      double hops = average_pairwise_hops(machine, fill_box(*torus, shape, n));
      if (hops < best_hops) best_hops = hops, best = shape;
    });
    if (!best.empty()) return fill_box(*torus, best, n);
  }
  NodeSet first(machine.node_count());
  first.set_range(0, n);
  return first;
}

}  // namespace trellis
