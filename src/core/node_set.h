// NodeSet: a set of node ids 0..size-1, stored as a bitset in 64-bit words.
//
// This is the one representation of "which nodes" in Trellis: free sets, allocations, busy sets.
// All set algebra works a word at a time; iteration skips empty words with countr_zero. Two sets
// combined by an operator must have the same size (a programmer error otherwise).
//
// Sets of up to kInlineWords * 64 nodes keep their words inside the object and never allocate;
// larger ones keep them on the heap. Schedulers and the simulator copy placements and free sets
// for every started job, and on the machines of most traces (128 nodes for the NASA iPSC) a heap
// block per copy cost more than the scheduling itself.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace trellis {

using NodeId = int32_t;

class NodeSet {
 public:
  using Word = uint64_t;
  static constexpr int kWordBits = 64;

  // Words kept inside the object: sets of up to 256 nodes do not allocate.
  static constexpr int kInlineWords = 4;

  NodeSet() = default;
  // An empty set over node ids [0, size).
  explicit NodeSet(int size);
  // Copies and moves are inline: they happen for every started job.
  NodeSet(const NodeSet& other) : size_(other.size_) {
    if (other.on_heap()) {
      size_ = 0;
      *this = other;
    } else {
      std::copy_n(other.inline_, kInlineWords, inline_);
    }
  }
  NodeSet(NodeSet&& other) noexcept : size_(other.size_) {
    if (other.on_heap()) {  // take its block
      words_ = other.words_;
      capacity_ = other.capacity_;
      other.words_ = other.inline_;
      other.capacity_ = kInlineWords;
    } else {
      std::copy_n(other.inline_, kInlineWords, inline_);
    }
    other.size_ = 0;  // a moved-from set is empty, as a moved-from vector is
  }
  // Assignment reuses this set's words when they are enough (no allocation for equal sizes).
  NodeSet& operator=(const NodeSet& other);
  NodeSet& operator=(NodeSet&& other) noexcept;
  ~NodeSet() {
    if (on_heap()) delete[] words_;
  }
  // The set of all node ids in [0, size).
  static NodeSet all(int size);
  // A set holding exactly `ids` (each must be < size).
  static NodeSet of(int size, const std::vector<NodeId>& ids);

  int size() const { return size_; }
  int count() const;
  bool empty() const { return none(); }
  bool none() const;
  bool any() const { return !none(); }
  bool all_set() const { return count() == size_; }

  bool test(NodeId id) const { return (words_[id >> 6] >> (id & 63)) & 1; }
  void set(NodeId id) { words_[id >> 6] |= Word{1} << (id & 63); }
  void reset(NodeId id) { words_[id >> 6] &= ~(Word{1} << (id & 63)); }
  // Sets or clears the half-open range [first, last).
  void set_range(NodeId first, NodeId last);
  void reset_range(NodeId first, NodeId last);
  void clear();

  // Set algebra. Operands must have equal size().
  NodeSet& operator|=(const NodeSet& other);
  NodeSet& operator&=(const NodeSet& other);
  NodeSet& operator-=(const NodeSet& other);  // set difference
  NodeSet& operator^=(const NodeSet& other);
  friend NodeSet operator|(NodeSet a, const NodeSet& b) { return a |= b; }
  friend NodeSet operator&(NodeSet a, const NodeSet& b) { return a &= b; }
  friend NodeSet operator-(NodeSet a, const NodeSet& b) { return a -= b; }
  friend NodeSet operator^(NodeSet a, const NodeSet& b) { return a ^= b; }
  // Complement within [0, size).
  NodeSet complement() const;
  bool intersects(const NodeSet& other) const;
  bool is_subset_of(const NodeSet& other) const;
  friend bool operator==(const NodeSet& a, const NodeSet& b);

  // The smallest member >= from, or -1 when there is none.
  NodeId next(NodeId from) const;
  NodeId first() const { return next(0); }
  // The smallest non-member >= from, or size() when every id from there on is a member.
  NodeId next_absent(NodeId from) const;
  // Members in increasing order.
  std::vector<NodeId> to_vector() const;
  // The maximal runs of consecutive members as inclusive [first, last] pairs, in increasing
  // order: {1, 2, 3, 7} gives {{1, 3}, {7, 7}}; the empty set gives none.
  std::vector<std::pair<NodeId, NodeId>> runs() const;
  template <typename F>
  void for_each(F&& visit) const {
    const size_t n = word_count();
    for (size_t w = 0; w < n; ++w) {
      for (Word bits = words_[w]; bits != 0; bits &= bits - 1) {
        visit(static_cast<NodeId>(w * kWordBits + std::countr_zero(bits)));
      }
    }
  }

  // Raw word access for word-parallel algorithms: (size() + 63) / 64 words. Bits at or above
  // size() are always zero (writers through mutable_words() must keep them so).
  std::span<const Word> words() const { return {words_, word_count()}; }
  std::span<Word> mutable_words() { return {words_, word_count()}; }

 private:
  size_t word_count() const { return static_cast<size_t>(size_ + kWordBits - 1) / kWordBits; }
  bool on_heap() const { return words_ != inline_; }
  // Makes room for `words` words (their values are unspecified) and sets size() to `size`.
  void reshape(int size);
  void release();     // frees a heap block; the set is then empty, with inline words
  void clear_tail();  // keeps the bits past size() at zero

  int size_ = 0;
  int capacity_ = kInlineWords;  // words at words_
  Word* words_ = inline_;        // inline_ or a heap block of capacity_ words
  Word inline_[kInlineWords] = {};
};

}  // namespace trellis
