// Binary buddy allocator (Knuth; the thesis's FCFS-BB and DQT partitions, seed 002).
//
// Nodes are numbered along a curve (option curve=rowmajor|snake|hilbert). Blocks are aligned
// ranges of 2^j ranks; a block that would reach past the last node does not exist. A job of n
// nodes needs a block of 2^ceil(log2 n). As in the buddy system, the free set is read as its
// maximal free blocks (free blocks whose buddy is not free too); the job takes the smallest
// maximal block that is big enough, at the lowest rank, splits it down to its own size by
// keeping the low half, and gets the first n ranks of that block.
//
// The allocator returns exactly n nodes, so when n is not a power of two the rest of its block
// stays free for later jobs. A scheduler that wants the buddy system's internal fragmentation
// (FCFS-BB) asks for buddy_block_size(n) nodes instead: this is Trellis's one buddy system, and
// the gang baselines fcfs-bb and scan-up-bb take their partitions from it (find_block) on a flat
// machine in identity order. It keeps no free lists between calls, as allocators are pure: the
// free set is read a 64-bit word at a time, blocks inside a word by shifts and masks, blocks of
// whole words from a bitmap of the all-free words.
//
// Default curve: Hilbert on meshes and tori of up to 3 axes, where an aligned block of a
// power-of-two cube is itself a sub-square or sub-cube; row-major (the leaf order) on fat
// trees and flat machines, where an aligned block sits under as few switches as possible.
// Registered as "buddy".
#pragma once

#include <optional>

#include "alloc/allocator.h"
#include "topology/curve.h"

namespace trellis {

// The smallest power of two >= nodes (nodes >= 1).
int buddy_block_size(int nodes);

class BuddyAllocator : public Allocator {
 public:
  BuddyAllocator(const Machine& machine, Curve curve);
  std::string_view name() const override { return "buddy"; }
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override;
  // Impossible when the block would be larger than the machine's largest block.
  Status check(const Request& request) const override;

  // The first rank of the block allocate() takes for a job of `nodes` nodes (its buddy block is
  // the first buddy_block_size(nodes) ranks from there), or nothing when none is free. For
  // callers that hold whole blocks and know the free count (the gang baselines,
  // sched/gang/space_sharing.h): no Placement is built, and `nodes` is not checked.
  std::optional<int> find_block(const NodeSet& free, int nodes) const;

  const Curve& curve() const { return curve_; }
  const Curve* node_order() const override { return &curve_; }

  struct Block {
    int first = -1;  // first rank; -1: no block
    int order = 0;   // log2 of its size
  };

 private:
  bool identity_order() const;
  // The smallest maximal free block of at least buddy_block_size(nodes) ranks, lowest first.
  Block choose(const NodeSet& free, int nodes) const;

  Curve curve_;
  bool identity_;  // rank r is node r: the free set is already the ranks' bitmap
};

}  // namespace trellis
