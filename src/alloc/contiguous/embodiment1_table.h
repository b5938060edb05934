// Seed 000's search tables (US9146782B2, digest shared/reference/000_fujitsu.md), as written.
//
// Prior art (FIGS. 26/27, mesh) and embodiment 1 (FIGS. 4/5, X torus via a virtual X axis of
// 2*Xmax columns) fill T[X][Y].yx[c] = f(d,e): from the corner (X,Y), the widest free rectangle
// of height e = c-Y+1 is d wide, area f. Both use the "shrinking XSize" cap: the scan for height
// e stops after the width found for height e-1. Each counts its condition checks exactly as the
// digest's section 6.2 does, which reproduces the patent's published counts on all-free 24xY
// grids: 999 (mesh, Y=1), 163,009 (mesh, Y=18), 629,677 (embodiment 1, Y=18).
//
// The generalised embodiment 1 (digest 4.6 and A16) works for any dimension count and wrap in any
// axes: fix the cross-section start (a_1, ..., a_{d-1}), then for every x start X (0..2*N_0-1 when
// x may cross, else 0..N_0-1) loop over the cross-section windows h = (h_1, ..., h_{d-1}) and scan
// x from X with the cap min_k d(h - e_k). Those sub-windows cover the window except its far corner,
// so the scan checks one node per column, as FIG. 5 does. Axes the box may cross are doubled:
// windows may run past the end and continue at 0. Starts in the virtual half of a cross axis
// repeat real starts and are not visited; x starts in the virtual half are, as in FIG. 4.
// In 2-D with x wrapping and y not, this is FIG. 4/5 step for step (same table, same count).
#pragma once

#include <vector>

#include "core/node_set.h"
#include "core/request.h"
#include "topology/torus.h"

namespace trellis {

// One entry of T[X][Y].yx[c]; all zero for invalid entries (c < Y).
struct SearchEntry {
  long f = 0;
  int d = 0;
  int e = 0;
  friend bool operator==(const SearchEntry&, const SearchEntry&) = default;
};

// The 2-D table: x_starts = Xmax (prior art) or 2*Xmax (embodiment 1).
struct SearchTable2D {
  int x_starts = 0;
  int ymax = 0;
  std::vector<SearchEntry> entries;  // [(X * ymax + Y) * ymax + c]
  const SearchEntry& at(int x, int y, int c) const { return entries[(x * ymax + y) * ymax + c]; }
};

// free: the node set of a 2-D machine (x fastest), bit set = free. checks: incremented by the
// number of condition checks (may be null).
SearchTable2D prior_art_search(const Torus& machine, const NodeSet& free, long* checks);
SearchTable2D embodiment1_search_2d(const Torus& machine, const NodeSet& free, long* checks);

// The generalised table for one cross-section start: for each x start X and window h, the
// forward run d (number of consecutive columns from X, along the doubled x axis when x may cross,
// whose window cross-section is free), before the clamp f = min(d, N_0) * |h|.
class Embodiment1Slice {
 public:
  int x_starts() const { return x_starts_; }
  // Largest window extent on cross axis k (>= 1) from this start.
  int window_limit(int axis) const { return limits_[axis]; }
  // Index of window `extents` (extents[k] for k >= 1; extents[0] is ignored).
  int window_index(const Shape& extents) const;
  int window_count() const { return window_count_; }
  int run(int x, int window) const {
    return runs_[static_cast<size_t>(x) * window_count_ + window];
  }

  // Builds the slice at cross-section start `start` (start[0] ignored). checks as above.
  static Embodiment1Slice build(const Torus& machine, const NodeSet& free, PlacementMode mode,
                                const Coords& start, long* checks);

 private:
  int x_starts_ = 0;
  Shape limits_;
  int window_count_ = 0;
  std::vector<int> runs_;
};

// Every slice in cross-start row order (rho = 0, 1, ...), with the outer loop's checks counted:
// the whole generalised table. For tests and the counts; the search builds slices one at a time.
std::vector<Embodiment1Slice> embodiment1_table(const Torus& machine, const NodeSet& free,
                                                PlacementMode mode, long* checks);

}  // namespace trellis
