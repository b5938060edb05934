#include <optional>
#include <vector>

#include "sched/backfill.h"
#include "sched/projection.h"

namespace trellis {

Schedule EasyPolicy::schedule(const SchedulerView& view, const Allocator& allocator) const {
  Schedule out;
  NodeSet free = view.free;
  int free_count = free.count();
  // The running jobs plus those started in this pass, for the head job's projection.
  std::vector<RunningJob> running(view.running.begin(), view.running.end());
  std::optional<Reservation> head;
  NodeSet free_outside_head;  // free minus the head's reserved nodes, once there is a head

  for (size_t i = 0; i < view.queue.size() && !(head && free_count == 0); ++i) {
    const Job& job = *view.queue[i];
    const Request& request = job.request;
    if (request.nodes > free_count && head) continue;
    if (!head) {
      if (request.nodes <= free_count) {
        if (auto p = allocator.allocate(free, request)) {
          free -= p->nodes;
          free_count -= request.nodes;
          running.push_back({job.id, view.now, view.now + job.time_limit, p->nodes});
          out.starts.push_back({i, std::move(*p)});
          continue;
        }
      }
      auto projection = earliest_fit(view.now, free, running, request, allocator);
      if (!projection) continue;  // can never fit: the caller rejects such jobs up front
      head = Reservation{job.id, projection->start, std::move(projection->placement.nodes)};
      free_outside_head = free - head->nodes;
      continue;
    }
    // Backfilling: a job that is gone by the reservation may use any free node; one that runs
    // past it must stay off the reserved nodes.
    bool ends_before = view.now + job.time_limit <= head->start;
    const NodeSet& usable = ends_before ? free : free_outside_head;
    if (!ends_before && free_outside_head.count() < request.nodes) continue;
    if (auto p = allocator.allocate(usable, request)) {
      free -= p->nodes;
      free_outside_head -= p->nodes;
      free_count -= request.nodes;
      out.starts.push_back({i, std::move(*p)});
    }
  }
  if (head) out.reservations.push_back(std::move(*head));
  return out;
}

}  // namespace trellis
