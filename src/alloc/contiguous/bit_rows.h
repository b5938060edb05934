// BitRows: a node set laid out as rows of bits along the scan axis x, for word-parallel search.
//
// Row index rho enumerates the cross-section coordinates (y, z, ...) row-major, y fastest, so
// node id = x + N_0 * rho. Each row holds N_0 bits in ceil(N_0/64) words (bit c of the row is
// column x = c); bits past N_0 are always zero. Operations work on whole rows, so their cost does
// not depend on N_0 beyond the word count.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "core/node_set.h"
#include "topology/torus.h"

namespace trellis {

class BitRows {
 public:
  using Word = NodeSet::Word;

  BitRows() = default;
  // All-zero rows for `machine`.
  explicit BitRows(const Torus& machine);
  // The rows of `nodes` on `machine`.
  BitRows(const Torus& machine, const NodeSet& nodes);

  int row_count() const { return rows_; }
  int words_per_row() const { return words_; }
  const Word* row(int rho) const { return &bits_[static_cast<size_t>(rho) * words_]; }
  Word* row(int rho) { return &bits_[static_cast<size_t>(rho) * words_]; }
  bool any() const;

  // this[rho] = a[rho] & b[rho + shift along cross axis `axis` (>= 1), cyclically].
  void assign_and_shifted(const BitRows& a, const BitRows& b, const Torus& machine, int axis,
                          int shift);
  // Clears every row whose coordinate on cross axis `axis` is at least `first`.
  void clear_from(const Torus& machine, int axis, int first);

  // this[rho] = AND of in[rho + j along `axis`] for j in [0, extent): the sliding-window AND,
  // by doubling (log2(extent) passes). When !cyclic, rows whose window would run past the end of
  // the axis are cleared. `scratch` is reused storage.
  void assign_window_and(const BitRows& in, const Torus& machine, int axis, int extent, bool cyclic,
                         BitRows& scratch);

 private:
  int rows_ = 0;
  int words_ = 0;
  std::vector<Word> bits_;
};

// Runs of set bits in a row of `nbits` bits (`words` words), found with countr_zero/countr_one.
// visit(start, length) is called once per maximal run. When cyclic, a run touching both ends is
// reported once, starting at its start near the end; a full row is reported as (0, nbits).
template <typename Visit>
void for_each_run(const NodeSet::Word* row, int words, int nbits, bool cyclic, Visit&& visit) {
  using Word = NodeSet::Word;
  auto next = [&](int from, bool want_one) {
    int w = from >> 6;
    if (w >= words) return words * 64;
    Word bits = (want_one ? row[w] : ~row[w]) & (~Word{0} << (from & 63));
    while (bits == 0) {
      if (++w == words) return words * 64;
      bits = want_one ? row[w] : ~row[w];
    }
    return w * 64 + std::countr_zero(bits);
  };
  int first_len = 0;  // length of a run starting at column 0, held back when cyclic
  int pos = 0;
  while (true) {
    int start = next(pos, true);
    if (start >= nbits) break;
    int end = next(start, false);
    if (end > nbits) end = nbits;
    if (cyclic && start == 0 && end < nbits) {
      first_len = end;
    } else if (cyclic && end == nbits && start > 0 && first_len > 0) {
      visit(start, end - start + first_len);
      first_len = 0;
    } else {
      visit(start, end - start);
    }
    pos = end;
    if (end >= nbits) break;
  }
  if (first_len > 0) visit(0, first_len);
}

}  // namespace trellis
