#include "sched/gang/buddy_system.h"

#include <bit>
#include <cassert>
#include <string>

namespace trellis::gang {

Result<BuddySystem> BuddySystem::make(int processors) {
  if (processors < 1 || !std::has_single_bit(static_cast<unsigned>(processors)))
    return fail("binary buddy: the machine must have a power-of-two number of processors, got " +
                std::to_string(processors));
  return BuddySystem(processors);
}

BuddySystem::BuddySystem(int processors)
    : processors_(processors), free_(processors), free_blocks_(order_of(processors) + 1) {
  free_blocks_.back().insert(0);
}

int BuddySystem::block_size(int size) {
  return static_cast<int>(std::bit_ceil(static_cast<unsigned>(size < 1 ? 1 : size)));
}

int BuddySystem::order_of(int block) {
  return std::countr_zero(static_cast<unsigned>(block));
}

bool BuddySystem::can_allocate(int size) const {
  int block = block_size(size);
  if (block > processors_) return false;
  for (int o = order_of(block); o < static_cast<int>(free_blocks_.size()); ++o)
    if (!free_blocks_[o].empty()) return true;
  return false;
}

std::optional<int> BuddySystem::allocate(int size) {
  int block = block_size(size);
  if (block > processors_) return std::nullopt;
  int want = order_of(block);
  int o = want;
  while (o < static_cast<int>(free_blocks_.size()) && free_blocks_[o].empty()) ++o;
  if (o == static_cast<int>(free_blocks_.size())) return std::nullopt;
  int first = *free_blocks_[o].begin();
  free_blocks_[o].erase(free_blocks_[o].begin());
  while (o > want) {  // split, keeping the lower half
    --o;
    free_blocks_[o].insert(first + (1 << o));
  }
  free_ -= block;
  return first;
}

void BuddySystem::release(int first, int size) {
  int block = block_size(size);
  int o = order_of(block);
  assert(first % block == 0);
  free_ += block;
  while (o + 1 < static_cast<int>(free_blocks_.size())) {
    int buddy = first ^ (1 << o);
    auto it = free_blocks_[o].find(buddy);
    if (it == free_blocks_[o].end()) break;
    free_blocks_[o].erase(it);
    first = std::min(first, buddy);
    ++o;
  }
  free_blocks_[o].insert(first);
}

}  // namespace trellis::gang
