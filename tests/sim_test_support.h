// Helpers shared by the scheduler and simulator tests: a line allocator that needs consecutive
// node ids (the simplest topology constraint, so reservations by shape can be checked by hand),
// and job builders.
#pragma once

#include <string>

#include "alloc/allocator.h"
#include "build_paths.h"
#include "core/job.h"

namespace trellis::testing {

// Places a job on the lowest run of request.nodes consecutive free ids: a 1-D mesh's contiguous
// allocator. It is complete: it finds a run whenever one exists.
class ConsecutiveAllocator : public Allocator {
 public:
  explicit ConsecutiveAllocator(const Machine& machine) : Allocator(machine) {}
  std::string_view name() const override { return "consecutive"; }
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override {
    for (NodeId id = free.next(0); id >= 0;) {
      NodeId end = free.next_absent(id);
      if (end - id >= request.nodes) {
        Placement p{NodeSet(free.size()), std::nullopt, {}, {}};
        p.nodes.set_range(id, id + request.nodes);
        return p;
      }
      id = end < free.size() ? free.next(end) : -1;
    }
    return fail("no " + std::to_string(request.nodes) + " consecutive free nodes");
  }
};

// The project's bundled workloads (data/workloads/: NASA iPSC and HPC2N as .swf.gz, Lublin).
inline std::string workloads_dir() {
  return TRELLIS_SOURCE_DIR + "/data/workloads";
}

inline Job make_job(JobId id, Seconds submit, int nodes, Seconds limit, Seconds run = -1) {
  Job job;
  job.id = id;
  job.submit = submit;
  job.time_limit = limit;
  job.run_time = run < 0 ? limit : run;
  job.request = Request::count(nodes);
  return job;
}

}  // namespace trellis::testing
