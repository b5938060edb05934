// The generalised embodiment-1 search: seed 000's search table (embodiment1_table.h) fed into the
// selection rule of fit_rule.h. A faithful reference, slow by design (about N_0^2 * prod N_k^2
// node checks on a free machine); the benchmark measures the production search against it.
//
// Reading the enclosing run off the table: the run containing the placement starts at the
// earliest start whose forward run reaches the placement's end. On a cyclic x axis the placement
// is looked at in the virtual half (x + N_0) when it fits there, so that runs starting before it
// are visible; a forward run of N_0 or more means the whole ring is free.
#include "alloc/contiguous/box_search.h"
#include "alloc/contiguous/embodiment1_table.h"

namespace trellis {

namespace {

class Embodiment1Search : public BoxSearch {
 public:
  explicit Embodiment1Search(const Torus& machine) : machine_(machine) {}

  std::string_view name() const override { return "embodiment1"; }

  std::optional<BoxChoice> choose(const NodeSet& free, const std::vector<Shape>& orientations,
                                  PlacementMode mode) const override {
    std::optional<BoxChoice> best;
    if (orientations.empty()) return best;
    const int n0 = machine_.extent(0);
    const bool cyclic = may_cross(machine_, mode, 0);
    const int rows = machine_.node_count() / n0;
    for (int rho = 0; rho < rows; ++rho) {
      const Coords start = machine_.coords(rho * n0);
      const auto slice = Embodiment1Slice::build(machine_, free, mode, start, nullptr);
      for (int index = 0; index < static_cast<int>(orientations.size()); ++index) {
        const Shape& s = orientations[index];
        if (!window_fits(slice, s)) continue;
        const int wi = slice.window_index(s);
        auto run = [&](int x) { return slice.run(x, wi); };
        const int x_limit = cyclic ? n0 : n0 - s[0] + 1;
        for (int a0 = 0; a0 < x_limit; ++a0) {
          if (std::min(run(a0), n0) < s[0]) continue;  // not feasible
          EnclosingRun er = cyclic ? cyclic_run(run, a0, s[0]) : linear_run(run, a0, s[0]);
          Coords anchor = start;
          anchor[0] = a0;
          FitKey key = fit_key(machine_, s, index, anchor, er);
          if (!best || key < best->key) best = BoxChoice{Box{anchor, s}, key};
        }
      }
    }
    return best;
  }

  std::optional<Box> largest_free_box(const NodeSet& free, PlacementMode mode) const override {
    std::optional<Box> best;
    const int n0 = machine_.extent(0);
    const int dims = machine_.dims();
    const int rows = machine_.node_count() / n0;
    for (int rho = 0; rho < rows; ++rho) {
      const Coords start = machine_.coords(rho * n0);
      const auto slice = Embodiment1Slice::build(machine_, free, mode, start, nullptr);
      Shape h(dims, 1);
      for (int wi = 0; wi < slice.window_count(); ++wi) {
        for (int x = 0; x < n0; ++x) {  // real starts only: virtual ones repeat them
          int d = std::min(slice.run(x, wi), n0);
          if (d == 0) continue;
          Box box{start, h};
          box.anchor[0] = x;
          box.extents[0] = d;
          if (!best || ranks_before_as_largest(machine_, box, *best)) best = box;
        }
        for (int k = 1; k < dims && ++h[k] > slice.window_limit(k); ++k) h[k] = 1;
      }
    }
    return best;
  }

 private:
  static bool window_fits(const Embodiment1Slice& slice, const Shape& s) {
    for (size_t k = 1; k < s.size(); ++k)
      if (s[k] > slice.window_limit(static_cast<int>(k))) return false;
    return true;
  }

  template <typename Run>
  static EnclosingRun linear_run(const Run& run, int a0, int s0) {
    int r = 0;
    while (r + run(r) < a0 + s0) ++r;
    return {r, run(r)};
  }

  template <typename Run>
  EnclosingRun cyclic_run(const Run& run, int a0, int s0) const {
    const int n0 = machine_.extent(0);
    const int p = (a0 + s0 <= n0) ? a0 + n0 : a0;  // the placement's columns on the doubled axis
    const int lo = p + s0 - n0;                    // >= 1
    if (lo + run(lo) >= p + s0) return {0, n0};    // n0 free columns in a row: the whole ring
    int r = lo + 1;
    while (r + run(r) < p + s0) ++r;
    r %= n0;
    return {r, run(r)};
  }

  Torus machine_;
};

}  // namespace

std::unique_ptr<BoxSearch> make_embodiment1_search(const Torus& machine) {
  return std::make_unique<Embodiment1Search>(machine);
}

}  // namespace trellis
