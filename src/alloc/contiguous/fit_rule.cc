#include "alloc/contiguous/fit_rule.h"

#include <cassert>

namespace trellis {

bool may_cross(const Torus& machine, PlacementMode mode, int axis) {
  return mode != PlacementMode::kMesh && machine.wraps(axis);
}

EnclosingRun enclosing_run(const std::vector<bool>& band, int a0, int s0, bool cyclic) {
  const int n = static_cast<int>(band.size());
  auto in_band = [&](int c) { return band[((c % n) + n) % n]; };
  int start = a0;
  int end = a0 + s0;  // exclusive; may pass n when cyclic
  if (cyclic) {
    bool all = true;
    for (bool b : band) all = all && b;
    if (all) return {0, n};
    while (in_band(start - 1)) --start;
    while (in_band(end)) ++end;
    return {((start % n) + n) % n, end - start};
  }
  assert(end <= n);
  while (start > 0 && band[start - 1]) --start;
  while (end < n && band[end]) ++end;
  return {start, end - start};
}

FitKey fit_key(const Torus& machine, const Shape& orientation, int orientation_index,
               const Coords& anchor, const EnclosingRun& run) {
  long score = run.length;
  for (int a = 1; a < machine.dims(); ++a) score *= orientation[a];
  const int n0 = machine.extent(0);
  return FitKey{score, ((anchor[0] - run.start) % n0 + n0) % n0, machine.id(anchor),
                orientation_index};
}

bool ranks_before_as_largest(const Torus& machine, const Box& a, const Box& b) {
  if (a.volume() != b.volume()) return a.volume() > b.volume();
  NodeId ia = machine.id(a.anchor), ib = machine.id(b.anchor);
  if (ia != ib) return ia < ib;
  return a.extents < b.extents;
}

}  // namespace trellis
