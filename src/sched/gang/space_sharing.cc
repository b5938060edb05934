#include "sched/gang/space_sharing.h"

#include <algorithm>
#include <cassert>

namespace trellis::gang {

SpaceSharing::SpaceSharing(std::string name, BuddySystem buddy)
    : name_(std::move(name)), buddy_(std::move(buddy)) {}

Status SpaceSharing::submit(JobId job, int size) {
  if (size < 1 || size > buddy_.processors())
    return fail("job " + std::to_string(job) + ": size " + std::to_string(size) +
                " is outside 1.." + std::to_string(buddy_.processors()) + " processors");
  ++waiting_;
  enqueue(Waiting{job, size});
  changed_ = true;
  return Ok{};
}

bool SpaceSharing::try_start(const Waiting& waiting) {
  auto first = buddy_.allocate(waiting.size);
  if (!first) return false;
  running_[waiting.job] = SlotJob{waiting.job, *first, block_size(waiting.size)};
  --waiting_;
  return true;
}

const std::vector<SlotJob>& SpaceSharing::next_slot() {
  if (!changed_) return slot_;
  changed_ = false;
  start_jobs();
  slot_.clear();
  for (const auto& [job, r] : running_) slot_.push_back(r);
  std::sort(slot_.begin(), slot_.end(),
            [](const SlotJob& a, const SlotJob& b) { return a.first < b.first; });
  return slot_;
}

void SpaceSharing::finish(JobId job) {
  auto it = running_.find(job);
  assert(it != running_.end() && "finish() of a job that is not running");
  buddy_.release(it->second.first, it->second.size);
  running_.erase(it);
  changed_ = true;
}

LoadIndex SpaceSharing::load() const {
  int used = buddy_.processors() - buddy_.free_processors();
  return LoadIndex{used > 0 ? 1 : 0, used == buddy_.processors() ? 1 : 0};
}

}  // namespace trellis::gang
