#include "alloc/contiguous/bit_rows.h"

#include <algorithm>
#include <cassert>
#include <span>

namespace trellis {

namespace {

// `count` (<= 64) bits of `words` starting at bit `pos`, in the low bits of the result.
NodeSet::Word bits_at(std::span<const NodeSet::Word> words, long pos, int count) {
  const size_t w = static_cast<size_t>(pos >> 6);
  const int shift = static_cast<int>(pos & 63);
  NodeSet::Word v = words[w] >> shift;
  if (shift != 0 && shift + count > 64 && w + 1 < words.size()) v |= words[w + 1] << (64 - shift);
  return count == 64 ? v : v & ((NodeSet::Word{1} << count) - 1);
}

// The row stride of cross axis `axis` (>= 1): rows between neighbours along it.
int row_stride(const Torus& machine, int axis) {
  return machine.stride(axis) / machine.extent(0);
}

}  // namespace

BitRows::BitRows(const Torus& machine)
    : rows_(machine.node_count() / machine.extent(0)),
      words_((machine.extent(0) + 63) / 64),
      bits_(static_cast<size_t>(rows_) * words_, 0) {}

BitRows::BitRows(const Torus& machine, const NodeSet& nodes) : BitRows(machine) {
  const int n0 = machine.extent(0);
  const auto src = nodes.words();
  if (n0 % 64 == 0) {  // rows are whole words already
    std::copy(src.begin(), src.begin() + bits_.size(), bits_.begin());
    return;
  }
  for (int rho = 0; rho < rows_; ++rho) {
    Word* out = row(rho);
    for (int w = 0; w < words_; ++w) {
      int count = std::min(64, n0 - w * 64);
      out[w] = bits_at(src, static_cast<long>(rho) * n0 + w * 64, count);
    }
  }
}

bool BitRows::any() const {
  for (Word w : bits_)
    if (w) return true;
  return false;
}

void BitRows::assign_and_shifted(const BitRows& a, const BitRows& b, const Torus& machine, int axis,
                                 int shift) {
  assert(axis >= 1 && a.bits_.size() == b.bits_.size());
  rows_ = a.rows_;
  words_ = a.words_;
  bits_.resize(a.bits_.size());
  const int n = machine.extent(axis);
  const size_t block = static_cast<size_t>(row_stride(machine, axis)) * words_;
  const size_t outer_count = bits_.size() / (block * n);
  const size_t head = static_cast<size_t>(n - shift % n) * block;  // partners without wrapping
  const size_t group = block * n;
  for (size_t outer = 0; outer < outer_count; ++outer) {
    // Two contiguous spans, so that the compiler can vectorise: c < n - shift reads c + shift,
    // the rest wraps to c + shift - n.
    const Word* pa = &a.bits_[outer * group];
    const Word* pb = &b.bits_[outer * group];
    Word* out = &bits_[outer * group];
    const size_t offset = group - head;
    for (size_t i = 0; i < head; ++i) out[i] = pa[i] & pb[i + offset];
    for (size_t i = head; i < group; ++i) out[i] = pa[i] & pb[i - head];
  }
}

void BitRows::clear_from(const Torus& machine, int axis, int first) {
  const int n = machine.extent(axis);
  if (first >= n) return;
  const size_t block = static_cast<size_t>(row_stride(machine, axis)) * words_;
  const size_t outer_count = bits_.size() / (block * n);
  for (size_t outer = 0; outer < outer_count; ++outer) {
    auto begin = bits_.begin() + (outer * n + std::max(first, 0)) * block;
    std::fill(begin, begin + (n - std::max(first, 0)) * block, 0);
  }
}

void BitRows::assign_window_and(const BitRows& in, const Torus& machine, int axis, int extent,
                                bool cyclic, BitRows& scratch) {
  // Invariant: *this holds windows of length `len`. Doubling keeps every partial window inside
  // [c, c + extent), so non-cyclic anchors never read wrapped rows except those cleared below.
  *this = in;
  int len = 1;
  while (2 * len <= extent) {
    scratch.assign_and_shifted(*this, *this, machine, axis, len);
    std::swap(*this, scratch);
    len *= 2;
  }
  if (len < extent) {
    scratch.assign_and_shifted(*this, *this, machine, axis, extent - len);
    std::swap(*this, scratch);
  }
  if (!cyclic) clear_from(machine, axis, machine.extent(axis) - extent + 1);
}

}  // namespace trellis
