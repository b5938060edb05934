// NodeSet: a set of node ids 0..size-1, stored as a bitset in 64-bit words.
//
// This is the one representation of "which nodes" in Trellis: free sets, allocations, busy sets.
// All set algebra works a word at a time; iteration skips empty words with countr_zero. Two sets
// combined by an operator must have the same size (a programmer error otherwise).
#pragma once

#include <bit>
#include <cstdint>
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

  NodeSet() = default;
  // An empty set over node ids [0, size).
  explicit NodeSet(int size);
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
  friend bool operator==(const NodeSet& a, const NodeSet& b) = default;

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
    for (size_t w = 0; w < words_.size(); ++w) {
      for (Word bits = words_[w]; bits != 0; bits &= bits - 1) {
        visit(static_cast<NodeId>(w * kWordBits + std::countr_zero(bits)));
      }
    }
  }

  // Raw word access for word-parallel algorithms. Bits at or above size() are always zero.
  const std::vector<Word>& words() const { return words_; }
  std::vector<Word>& mutable_words() { return words_; }

 private:
  void clear_tail();  // keeps the bits past size() at zero

  int size_ = 0;
  std::vector<Word> words_;
};

}  // namespace trellis
