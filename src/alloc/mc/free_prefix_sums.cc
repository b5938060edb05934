#include "alloc/mc/free_prefix_sums.h"

#include <algorithm>

namespace trellis {

FreePrefixSums::FreePrefixSums(const Torus& torus, const NodeSet& free) {
  for (int a = 0; a < torus.dims(); ++a) ext_[a] = torus.extent(a);
  const int sx = ext_[0] + 1, sy = ext_[1] + 1;
  table_.assign(static_cast<size_t>(sx) * sy * (ext_[2] + 1), 0);
  NodeId id = 0;
  for (int z = 1; z <= ext_[2]; ++z)
    for (int y = 1; y <= ext_[1]; ++y)
      for (int x = 1; x <= ext_[0]; ++x, ++id) {
        int v = free.test(id) ? 1 : 0;
        v += at(x - 1, y, z) + at(x, y - 1, z) + at(x, y, z - 1) - at(x - 1, y - 1, z) -
             at(x - 1, y, z - 1) - at(x, y - 1, z - 1) + at(x - 1, y - 1, z - 1);
        table_[(z * sy + y) * sx + x] = v;
      }
}

int FreePrefixSums::count(const std::array<int, 3>& lo, const std::array<int, 3>& hi) const {
  const int x0 = lo[0], y0 = lo[1], z0 = lo[2];
  const int x1 = hi[0] + 1, y1 = hi[1] + 1, z1 = hi[2] + 1;
  return at(x1, y1, z1) - at(x0, y1, z1) - at(x1, y0, z1) - at(x1, y1, z0) + at(x0, y0, z1) +
         at(x0, y1, z0) + at(x1, y0, z0) - at(x0, y0, z0);
}

int FreePrefixSums::count_cube(const std::array<int, 3>& centre, int r,
                               const std::array<bool, 3>& wraps) const {
  // Per axis, the cube covers one or two index ranges (two when it runs through a wrap).
  std::array<std::array<std::array<int, 2>, 2>, 3> ranges;
  std::array<int, 3> parts{};
  for (int a = 0; a < 3; ++a) {
    const int e = ext_[a], c = centre[a];
    if (!wraps[a]) {
      ranges[a][0] = {std::max(0, c - r), std::min(e - 1, c + r)};
      parts[a] = 1;
    } else if (2 * r + 1 >= e) {
      ranges[a][0] = {0, e - 1};
      parts[a] = 1;
    } else if (c - r < 0) {
      ranges[a][0] = {0, c + r};
      ranges[a][1] = {c - r + e, e - 1};
      parts[a] = 2;
    } else if (c + r >= e) {
      ranges[a][0] = {c - r, e - 1};
      ranges[a][1] = {0, c + r - e};
      parts[a] = 2;
    } else {
      ranges[a][0] = {c - r, c + r};
      parts[a] = 1;
    }
  }
  int total = 0;
  for (int i = 0; i < parts[0]; ++i)
    for (int j = 0; j < parts[1]; ++j)
      for (int k = 0; k < parts[2]; ++k)
        total += count({ranges[0][i][0], ranges[1][j][0], ranges[2][k][0]},
                       {ranges[0][i][1], ranges[1][j][1], ranges[2][k][1]});
  return total;
}

}  // namespace trellis
