#include "sched/gang/fcfs_buddy.h"

namespace trellis::gang {

Result<std::unique_ptr<FcfsBuddy>> FcfsBuddy::make(std::string name, int processors) {
  auto buddy = BuddySystem::make(processors);
  if (!buddy) return buddy.error();
  return std::unique_ptr<FcfsBuddy>(new FcfsBuddy(std::move(name), std::move(*buddy)));
}

void FcfsBuddy::start_jobs() {
  while (!queue_.empty() && try_start(queue_.front())) queue_.pop_front();
}

}  // namespace trellis::gang
