#include "alloc/allocator.h"

namespace trellis {

Status Allocator::check(const Request& request) const {
  if (request.nodes < 1) return fail("a job needs at least one node");
  if (request.nodes > machine_.node_count())
    return fail("the job asks for " + std::to_string(request.nodes) + " nodes but " +
                machine_.describe() + " has only " + std::to_string(machine_.node_count()));
  return Ok{};
}

}  // namespace trellis
