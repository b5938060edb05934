// BuddySystem: Knuth's binary buddy allocator over P = 2^k processors, the space-sharing
// partitioner of the thesis's FCFS-BB and ScanUp baselines (thesis section 7.2.4). A request is
// rounded up to a power of two and served from the smallest free block that holds it (lowest
// address among equals), splitting as needed; freeing merges a block with its free buddy.
//
// Unlike the pure allocators of alloc/, this keeps the free lists between calls: the baselines
// allocate and free one block at a time, which is what the buddy system is made for.
#pragma once

#include <optional>
#include <set>
#include <vector>

#include "core/result.h"

namespace trellis::gang {

class BuddySystem {
 public:
  // An error unless processors is a power of two.
  static Result<BuddySystem> make(int processors);

  int processors() const { return processors_; }
  int free_processors() const { return free_; }
  // The block size a request of `size` processors takes (the next power of two).
  static int block_size(int size);

  // The first processor of a newly allocated block of block_size(size) processors, or nothing
  // if no free block is large enough.
  std::optional<int> allocate(int size);
  // Whether allocate(size) would succeed, without changing anything.
  bool can_allocate(int size) const;
  // Frees a block returned by allocate(size).
  void release(int first, int size);

 private:
  explicit BuddySystem(int processors);
  static int order_of(int block);

  int processors_;
  int free_;
  std::vector<std::set<int>> free_blocks_;  // by order: first processors of free blocks
};

}  // namespace trellis::gang
