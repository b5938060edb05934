// The production search: word-parallel over rows of 64-bit words along x (bit_rows.h).
//
// Choosing a box. For an orientation s, the sliding-window AND of the rows over the
// cross-section window s_1 x ... x s_{d-1} (by doubling, so its cost grows with log s_k, not
// s_k) gives, for every cross-section anchor rho, the band of fit_rule.h as one bit row. Every
// maximal run of that row with length L >= s_0 holds feasible anchors, and all of them share the
// score f = L * s_1 * ... * s_{d-1}; the one at offset 0 (the run's start) beats the others. So
// the winner is always at offset 0, and per row only the shortest run of length >= s_0 (earliest
// start on ties) can win. Runs come from countr_zero/countr_one; there is no per-node loop,
// and feasible anchors need no shifted-AND pass of their own: a run of length >= s_0 is one.
//
// Largest free box. Loop over cross-section windows, growing one extent at a time with one AND
// per row, and stop growing once the AND is empty; per row the longest run of the AND gives the
// largest box for that window and anchor. A window is skipped when even a full row
// (N_0 * window volume) could not beat the best box so far, and a row when its popcount times
// the window volume could not; a few large windows are evaluated first to set that bar high.
#include <algorithm>
#include <bit>

#include "alloc/contiguous/bit_rows.h"
#include "alloc/contiguous/box_search.h"

namespace trellis {

namespace {

class ProductionSearch : public BoxSearch {
 public:
  explicit ProductionSearch(const Torus& machine) : machine_(machine) {}

  std::string_view name() const override { return "production"; }

  std::optional<BoxChoice> choose(const NodeSet& free, const std::vector<Shape>& orientations,
                                  PlacementMode mode) const override {
    if (orientations.empty()) return std::nullopt;
    const BitRows rows(machine_, free);
    const int dims = machine_.dims();
    const int n0 = machine_.extent(0);
    const bool cyclic = may_cross(machine_, mode, 0);
    std::optional<BoxChoice> best;
    BitRows band, scratch, step;
    for (int index = 0; index < static_cast<int>(orientations.size()); ++index) {
      const Shape& s = orientations[index];
      // band = AND over the cross-section window, axis by axis.
      band = rows;
      long cross_volume = 1;
      for (int k = 1; k < dims; ++k) {
        cross_volume *= s[k];
        if (s[k] == 1) continue;  // a window of one row is the row itself
        step.assign_window_and(band, machine_, k, s[k], may_cross(machine_, mode, k), scratch);
        std::swap(band, step);
      }
      for (int rho = 0; rho < band.row_count(); ++rho) {
        int best_len = 0, best_start = 0;
        for_each_run(band.row(rho), band.words_per_row(), n0, cyclic, [&](int start, int len) {
          if (len < s[0]) return;
          if (best_len == 0 || len < best_len || (len == best_len && start < best_start)) {
            best_len = len;
            best_start = start;
          }
        });
        if (best_len == 0) continue;
        FitKey key{best_len * cross_volume, 0, best_start + n0 * rho, index};
        if (!best || key < best->key) best = BoxChoice{Box{machine_.coords(key.anchor), s}, key};
      }
    }
    return best;
  }

  std::optional<Box> largest_free_box(const NodeSet& free, PlacementMode mode) const override {
    if (free.none()) return std::nullopt;
    const int dims = machine_.dims();
    State state{
        BitRows(machine_, free), mode, std::vector<BitRows>(dims), Shape(dims, 1), {}, 0, 0};
    // level k holds the AND over the windows of axes > k; the top level is the free set itself.
    seed(state);
    state.levels[dims - 1] = state.rows;
    descend(state, dims - 1);
    return state.best;
  }

 private:
  struct State {
    BitRows rows;
    PlacementMode mode;
    std::vector<BitRows> levels;  // levels[k]: AND over windows of axes > k (anchored per row)
    Shape extents;                // current window; extents[0] filled in per row
    std::optional<Box> best;
    long best_volume = 0;  // of best (0 while there is none)
    NodeId best_anchor = 0;
  };

  // Evaluates a few large windows first (extents N_k, N_k/2, N_k/4, ..., 1 on each cross axis,
  // each by a doubling window AND) so that a big box is known early and the full enumeration
  // below can skip most windows and rows by the volume bound. Only a speed-up: every window is
  // still covered by the enumeration.
  void seed(State& state) const {
    const int dims = machine_.dims();
    if (dims == 1) return;
    Shape window(dims, 1);
    BitRows band, step, scratch;
    auto visit = [&](auto& self, int k) -> void {
      if (k == dims) {
        band = state.rows;
        for (int a = 1; a < dims; ++a) {
          if (window[a] == 1) continue;
          step.assign_window_and(band, machine_, a, window[a], may_cross(machine_, state.mode, a),
                                 scratch);
          std::swap(band, step);
        }
        state.extents = window;
        evaluate(state, band);
        return;
      }
      for (int e = machine_.extent(k);; e = (e + 1) / 2) {
        window[k] = e;
        self(self, k + 1);
        if (e == 1) break;
      }
      window[k] = 1;
    };
    visit(visit, 1);
    state.extents.assign(dims, 1);
  }

  // Grows the window on axis k (>= 1) over levels[k] and recurses to axis k-1; at axis 0
  // evaluates the rows.
  void descend(State& state, int k) const {
    if (k == 0) {
      evaluate(state, state.levels[0]);
      return;
    }
    const BitRows& in = state.levels[k];
    BitRows& out = state.levels[k - 1];
    const bool crossing = may_cross(machine_, state.mode, k);
    const int n = machine_.extent(k);
    out = in;
    for (int e = 1; e <= n; ++e) {
      if (e > 1) {
        out.assign_and_shifted(out, in, machine_, k, e - 1);
        if (!crossing) out.clear_from(machine_, k, n - e + 1);
        if (!out.any()) break;
      }
      state.extents[k] = e;
      descend(state, k - 1);
    }
    state.extents[k] = 1;
  }

  void evaluate(State& state, const BitRows& band) const {
    const int n0 = machine_.extent(0);
    long cross_volume = 1;
    for (int k = 1; k < machine_.dims(); ++k) cross_volume *= state.extents[k];
    if (state.best_volume > n0 * cross_volume) return;
    const bool cyclic = may_cross(machine_, state.mode, 0);
    const int words = band.words_per_row();
    for (int rho = 0; rho < band.row_count(); ++rho) {
      const BitRows::Word* row = band.row(rho);
      int ones = 0;
      for (int w = 0; w < words; ++w) ones += std::popcount(row[w]);
      if (ones == 0 || ones * cross_volume < state.best_volume) continue;  // cannot win
      int best_len = 0, best_start = 0;
      if (ones == n0) {  // a full row: one run (the whole ring when cyclic)
        best_len = n0;
      } else {
        for_each_run(row, words, n0, cyclic, [&](int start, int len) {
          if (len > best_len || (len == best_len && start < best_start)) {
            best_len = len;
            best_start = start;
          }
        });
      }
      const long volume = best_len * cross_volume;
      const NodeId anchor = best_start + n0 * rho;
      if (volume < state.best_volume) continue;
      if (volume == state.best_volume) {  // ties: smaller anchor id, then smaller extents
        if (anchor > state.best_anchor) continue;
        if (anchor == state.best_anchor) {
          Shape extents = state.extents;
          extents[0] = best_len;
          if (!(extents < state.best->extents)) continue;
        }
      }
      state.best = Box{machine_.coords(anchor), state.extents};
      state.best->extents[0] = best_len;
      state.best_volume = volume;
      state.best_anchor = anchor;
    }
  }

  Torus machine_;
};

}  // namespace

std::unique_ptr<BoxSearch> make_production_search(const Torus& machine) {
  return std::make_unique<ProductionSearch>(machine);
}

}  // namespace trellis
