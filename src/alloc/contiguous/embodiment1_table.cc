#include "alloc/contiguous/embodiment1_table.h"

#include <algorithm>

#include "alloc/contiguous/fit_rule.h"

namespace trellis {

namespace {

// The condition-check counter of the digest's section 6.2: every evaluated condition counts one.
struct Counter {
  long* total;
  long n = 0;
  bool check(bool condition) {
    ++n;
    return condition;
  }
  ~Counter() {
    if (total) *total += n;
  }
};

// FIG. 26 + FIG. 27 (virtual = false) or FIG. 4 + FIG. 5 (virtual = true).
SearchTable2D search_2d(const Torus& machine, const NodeSet& free, bool virtual_x, long* checks) {
  const int xmax = machine.extent(0);
  const int ymax = machine.dims() > 1 ? machine.extent(1) : 1;
  const int w = virtual_x ? 2 * xmax : xmax;  // X loop bound (S4: "X < 8" for Xmax = 4)
  SearchTable2D t{w, ymax, std::vector<SearchEntry>(static_cast<size_t>(w) * ymax * ymax)};
  auto is_free = [&](int x, int y) { return free.test(x % xmax + xmax * y); };
  Counter n{checks};
  for (int y = 0; n.check(y < ymax); ++y) {      // S1, S2, S7
    for (int x = 0; n.check(x < w); ++x) {       // S3, S4, S6; S5 is the Y-fixed process:
      int xsize = w - x, i = x, d = 0, e = 1;    // S11
      for (int c = y; n.check(c < ymax); ++c) {  // S12
        while (n.check(i < w) && n.check(i - x < xsize) && n.check(is_free(i, c))) {  // S13-S15
          ++d;                                                                        // S16
          ++i;
        }
        long f = d * e;                                      // S19 (prior art: S217)
        if (virtual_x && !n.check(d <= xmax)) f = xmax * e;  // S17, S18
        t.entries[(x * ymax + y) * ymax + c] = {f, d, e};    // S20
        xsize = d;
        i = x;
        d = 0;
        ++e;
      }
    }
  }
  return t;
}

}  // namespace

SearchTable2D prior_art_search(const Torus& machine, const NodeSet& free, long* checks) {
  return search_2d(machine, free, false, checks);
}

SearchTable2D embodiment1_search_2d(const Torus& machine, const NodeSet& free, long* checks) {
  return search_2d(machine, free, true, checks);
}

int Embodiment1Slice::window_index(const Shape& extents) const {
  int index = 0;
  for (int k = static_cast<int>(limits_.size()) - 1; k >= 1; --k)
    index = index * limits_[k] + (extents[k] - 1);
  return index;
}

Embodiment1Slice Embodiment1Slice::build(const Torus& machine, const NodeSet& free,
                                         PlacementMode mode, const Coords& start, long* checks) {
  const int dims = machine.dims();
  const int n0 = machine.extent(0);
  const bool virtual_x = may_cross(machine, mode, 0);
  Embodiment1Slice s;
  s.x_starts_ = virtual_x ? 2 * n0 : n0;
  s.limits_.assign(dims, 1);
  s.window_count_ = 1;
  for (int k = 1; k < dims; ++k) {
    s.limits_[k] = may_cross(machine, mode, k) ? machine.extent(k) : machine.extent(k) - start[k];
    s.window_count_ *= s.limits_[k];
  }
  s.runs_.assign(static_cast<size_t>(s.x_starts_) * s.window_count_, 0);

  // Node ids of the far corner of every window, so that the scan tests one node per column.
  std::vector<NodeId> corner_row(s.window_count_);
  {
    Shape h(dims, 1);
    for (int wi = 0; wi < s.window_count_; ++wi) {
      Coords c{};
      for (int k = 1; k < dims; ++k) c[k] = (start[k] + h[k] - 1) % machine.extent(k);
      corner_row[wi] = machine.id(c);  // x = 0
      for (int k = 1; k < dims && ++h[k] > s.limits_[k]; ++k) h[k] = 1;
    }
  }
  // Offsets of the sub-windows h - e_k, for the cap.
  std::vector<int> radix(dims, 1);
  for (int k = 2; k < dims; ++k) radix[k] = radix[k - 1] * s.limits_[k - 1];

  Counter n{checks};
  const int w = s.x_starts_;
  for (int x = 0; n.check(x < w); ++x) {  // S4
    int* d_of = &s.runs_[static_cast<size_t>(x) * s.window_count_];
    Shape h(dims, 1);
    for (int wi = 0; n.check(wi < s.window_count_); ++wi) {  // S12, generalised
      int xsize = w - x;                                     // S11 for the first window
      for (int k = 1; k < dims; ++k)
        if (h[k] > 1) xsize = std::min(xsize, d_of[wi - radix[k]]);  // the shrinking cap
      int i = x, d = 0;
      while (n.check(i < w) && n.check(i - x < xsize) &&
             n.check(free.test(corner_row[wi] + i % n0))) {  // S13-S15
        ++d;
        ++i;
      }
      if (virtual_x) n.check(d <= n0);  // S17: the clamp is applied where f is formed
      d_of[wi] = d;
      for (int k = 1; k < dims && ++h[k] > s.limits_[k]; ++k) h[k] = 1;
    }
  }
  return s;
}

std::vector<Embodiment1Slice> embodiment1_table(const Torus& machine, const NodeSet& free,
                                                PlacementMode mode, long* checks) {
  std::vector<Embodiment1Slice> out;
  const int rows = machine.node_count() / machine.extent(0);
  Counter n{checks};
  for (int rho = 0; n.check(rho < rows); ++rho)  // S2, generalised
    out.push_back(Embodiment1Slice::build(machine, free, mode,
                                          machine.coords(rho * machine.extent(0)), checks));
  return out;
}

}  // namespace trellis
