// FreePrefixSums: counts of free nodes in any axis-aligned box of a 1- to 3-axis grid in O(1),
// from a 3-D inclusive prefix-sum table built once per free set (MC allocation, digest 4.10).
#pragma once

#include <array>
#include <vector>

#include "core/node_set.h"
#include "topology/torus.h"

namespace trellis {

class FreePrefixSums {
 public:
  // `torus` has 1 to 3 axes; missing axes count as extent 1.
  FreePrefixSums(const Torus& torus, const NodeSet& free);

  // Free nodes with lo[a] <= coord[a] <= hi[a] on every axis (inclusive, inside the grid).
  int count(const std::array<int, 3>& lo, const std::array<int, 3>& hi) const;

  // Free nodes within L-infinity distance r of `centre`. Axes listed in `wraps` measure the
  // distance the short way round; the others clip the cube at the grid's faces.
  int count_cube(const std::array<int, 3>& centre, int r, const std::array<bool, 3>& wraps) const;

  const std::array<int, 3>& extents() const { return ext_; }

 private:
  int at(int x, int y, int z) const { return table_[(z * (ext_[1] + 1) + y) * (ext_[0] + 1) + x]; }

  std::array<int, 3> ext_{1, 1, 1};
  std::vector<int> table_;  // (X+1)(Y+1)(Z+1), zero row and column first
};

}  // namespace trellis
