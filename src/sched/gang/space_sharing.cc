#include "sched/gang/space_sharing.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace trellis::gang {

namespace {

// The flat machine of the gang's processors.
Machine flat_machine(int processors) {
  auto machine = Machine::parse("flat:" + std::to_string(processors));
  assert(machine && "a flat machine of a power-of-two node count");
  return *machine;
}

bool by_first(const SlotJob& a, const SlotJob& b) {
  return a.first < b.first;
}

}  // namespace

Status SpaceSharing::check_processors(int processors) {
  if (processors < 1 || !std::has_single_bit(static_cast<unsigned>(processors)))
    return fail("binary buddy: the machine must have a power-of-two number of processors, got " +
                std::to_string(processors));
  return Ok{};
}

SpaceSharing::SpaceSharing(std::string name, int processors)
    : name_(std::move(name)),
      processors_(processors),
      buddy_(flat_machine(processors), Curve::identity(processors)),
      free_(NodeSet::all(processors)) {}

Status SpaceSharing::submit(JobId job, int size) {
  if (size < 1 || size > processors_)
    return fail("job " + std::to_string(job) + ": size " + std::to_string(size) +
                " is outside 1.." + std::to_string(processors_) + " processors");
  ++waiting_;
  enqueue(Waiting{job, size});
  changed_ = true;
  return Ok{};
}

bool SpaceSharing::try_start(const Waiting& waiting) {
  const int block = buddy_block_size(waiting.size);
  if (block >= no_room_for_ || block > processors_ - used_) return false;
  // The block allocate() would place a request of `block` nodes on (identity order: ranks are
  // processors), without building its Placement.
  auto first = buddy_.find_block(free_, block);
  if (!first) {
    no_room_for_ = block;
    return false;
  }
  free_.reset_range(*first, *first + block);
  used_ += block;
  const SlotJob started{waiting.job, *first, block};
  running_[waiting.job] = started;
  slot_.insert(std::lower_bound(slot_.begin(), slot_.end(), started, by_first), started);
  --waiting_;
  return true;
}

const std::vector<SlotJob>& SpaceSharing::next_slot() {
  if (!changed_) return slot_;
  changed_ = false;
  start_jobs();
  return slot_;
}

void SpaceSharing::finish(JobId job) {
  auto it = running_.find(job);
  assert(it != running_.end() && "finish() of a job that is not running");
  free_.set_range(it->second.first, it->second.first + it->second.size);
  used_ -= it->second.size;
  slot_.erase(std::lower_bound(slot_.begin(), slot_.end(), it->second, by_first));
  no_room_for_ = std::numeric_limits<int>::max();
  running_.erase(it);
  changed_ = true;
}

LoadIndex SpaceSharing::load() const {
  return LoadIndex{used_ > 0 ? 1 : 0, used_ == processors_ ? 1 : 0};
}

}  // namespace trellis::gang
