// The selection rule of the contiguous allocator: which free box a request goes into.
//
// Seed 000 (Fujitsu US9146782B2) picks "the smallest rectangle containing free nodes that
// satisfies the shape", so that large free space stays large. Trellis makes that exact and
// two-sided, for any dimension count. Axis 0 (x) is the scan axis, as in the patent.
//
// For an orientation s (see orientations.h) and an anchor a (the box's minimum corner):
//   * Crossing: the box may cross the wrap-around on axis k only if the mode allows it (torus)
//     and the machine wraps on k (may_cross). Valid anchors: a_k in [0, N_k) where it may cross,
//     else a_k in [0, N_k - s_k].
//   * Feasible: every node of the box is free.
//   * Band: the x-columns c whose cross-section {c} x [a_1, a_1+s_1) x ... is all free.
//   * Enclosing run: the maximal interval of consecutive band columns containing [a_0, a_0+s_0);
//     cyclic when the box may cross on axis 0, linear otherwise. L is its length (L <= N_0) and r
//     its first column; when every column of a cyclic axis is in the band, L = N_0 and r = 0.
//   * Score f = L * s_1 * ... * s_{d-1}: the volume of the maximal free box that encloses the
//     placement along the scan axis. In 1-D it is the length of the free run the job goes into.
//   * offset = (a_0 - r) mod N_0.
//   * Winner: the smallest (f, offset, anchor node id, orientation index). The job goes into the
//     tightest free run, left-aligned in it, at the lowest position, first orientation first.
//
// The largest free box (a metric, and shown after each decision) is the free box of largest
// volume, any extents, crossing exactly where may_cross allows; ties go to the smallest anchor
// node id, then the lexicographically smallest extents. Full extent on a crossing axis therefore
// has anchor coordinate 0 on that axis (the canonical form), because every anchor gives the same
// nodes and 0 is the smallest.
#pragma once

#include <compare>
#include <vector>

#include "core/request.h"
#include "topology/box.h"
#include "topology/torus.h"

namespace trellis {

// May a box cross the wrap-around on `axis`? Only in torus mode (kNonContiguous is treated as
// torus: any nodes are acceptable, so a wrapping box is too) and only where the machine wraps.
bool may_cross(const Torus& machine, PlacementMode mode, int axis);

// The ordering key of a candidate placement; smaller is better.
struct FitKey {
  long score = 0;       // f
  int offset = 0;       // (a_0 - r) mod N_0
  NodeId anchor = 0;    // row-major id of the anchor
  int orientation = 0;  // index in the orientation list
  friend auto operator<=>(const FitKey&, const FitKey&) = default;
};

// A chosen placement: the box (anchor, oriented extents) and the key that won.
struct BoxChoice {
  Box box;
  FitKey key;
  friend bool operator==(const BoxChoice&, const BoxChoice&) = default;
};

// A run of consecutive columns along the scan axis.
struct EnclosingRun {
  int start = 0;
  int length = 0;
  friend bool operator==(const EnclosingRun&, const EnclosingRun&) = default;
};

// The enclosing run of the columns [a0, a0+s0) (taken mod band.size() when cyclic) in `band`.
// Every one of those columns must be in the band.
EnclosingRun enclosing_run(const std::vector<bool>& band, int a0, int s0, bool cyclic);

// The fit key of a placement whose enclosing run is `run`.
FitKey fit_key(const Torus& machine, const Shape& orientation, int orientation_index,
               const Coords& anchor, const EnclosingRun& run);

// True when free box `a` ranks before free box `b` as "largest free box": larger volume, then
// smaller anchor node id, then lexicographically smaller extents.
bool ranks_before_as_largest(const Torus& machine, const Box& a, const Box& b);

}  // namespace trellis
