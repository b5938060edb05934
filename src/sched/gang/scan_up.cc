#include "sched/gang/scan_up.h"

#include "sched/scan.h"

namespace trellis::gang {

Result<std::unique_ptr<ScanUp>> ScanUp::make(std::string name, int processors) {
  if (auto ok = check_processors(processors); !ok) return ok.error();
  return std::unique_ptr<ScanUp>(new ScanUp(std::move(name), processors));
}

ScanUp::ScanUp(std::string name, int processors)
    : SpaceSharing(std::move(name), processors), by_class_(size_class(processors) + 1) {}

void ScanUp::enqueue(Waiting waiting) {
  by_class_[size_class(waiting.size)].push_back(waiting);
}

void ScanUp::start_jobs() {
  current_ = serve_scan<ScanDirection::kUp>(by_class_, current_,
                                            [this](const Waiting& w) { return try_start(w); });
}

}  // namespace trellis::gang
