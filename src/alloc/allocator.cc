#include "alloc/allocator.h"

namespace trellis {

Error does_not_fit_now() {
  return fail(Error::Code::kDoesNotFitNow, "no room now");  // short enough to stay inline
}

Error never_fits(std::string why) {
  return fail(Error::Code::kNeverFits, std::move(why));
}

Status Allocator::check(const Request& request) const {
  if (request.nodes < 1) return never_fits("a job needs at least one node");
  if (request.nodes > machine_.node_count())
    return never_fits("the job asks for " + std::to_string(request.nodes) + " nodes but " +
                      machine_.describe() + " has only " + std::to_string(machine_.node_count()));
  return Ok{};
}

}  // namespace trellis
