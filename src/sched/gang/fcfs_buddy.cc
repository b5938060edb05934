#include "sched/gang/fcfs_buddy.h"

#include "sched/fcfs.h"

namespace trellis::gang {

Result<std::unique_ptr<FcfsBuddy>> FcfsBuddy::make(std::string name, int processors) {
  if (auto ok = check_processors(processors); !ok) return ok.error();
  return std::unique_ptr<FcfsBuddy>(new FcfsBuddy(std::move(name), processors));
}

void FcfsBuddy::start_jobs() {
  start_until_blocked(queue_, [this](const Waiting& w) { return try_start(w); });
}

}  // namespace trellis::gang
