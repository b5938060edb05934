#include <optional>
#include <vector>

#include "sched/backfill.h"
#include "sched/projection.h"

namespace trellis {

namespace {

// The head job's promise while a pass backfills around it.
struct Head {
  size_t index;
  Reservation reservation;
  NodeSet projected;  // nodes free at the reservation's start, given the jobs started so far
  NodeSet outside;    // free nodes outside the reservation
};

}  // namespace

// A job that ends (by its limit) before the head's reservation may use any free node: its nodes
// are back by then. One that runs past it may start if the head still fits at its reserved time
// without the nodes it takes: first on nodes outside the head's reserved set (nothing to check),
// else anywhere, asking the allocator for a new place for the head among the nodes projected free
// at that time. For count-only requests this is exactly classic EASY's "extra nodes" rule; for
// boxes it keeps a place that can hold the box. The head's reservation from the previous pass is
// kept when the projection would now be later, so the head never starts after a time it was
// promised.
Schedule EasyPolicy::schedule(const SchedulerView& view, const Allocator& allocator) const {
  Schedule out;
  NodeSet free = view.free;
  int free_count = free.count();
  // Jobs started in this pass before the head was found: the head's projection counts them too.
  std::vector<RunningJob> started;
  std::optional<Head> head;

  auto start = [&](size_t i, Placement placement) {
    const Job& job = *view.queue[i];
    free -= placement.nodes;
    free_count -= job.request.nodes;
    if (head)
      head->outside -= placement.nodes;
    else
      started.push_back(
          {job.id, view.now, view.now + job.time_limit, placement.nodes, job.request.nodes});
    out.starts.push_back({i, std::move(placement)});
  };

  for (size_t i = 0; i < view.queue.size() && !(head && free_count == 0); ++i) {
    const Job& job = *view.queue[i];
    const Request& request = job.request;
    if (request.nodes > free_count && head) continue;
    if (!head) {
      if (request.nodes <= free_count) {
        if (auto p = allocator.allocate(free, request)) {
          start(i, std::move(*p));
          continue;
        }
      }
      // The promise of the previous pass, if this job was the head then.
      const Reservation* previous = nullptr;
      for (const Reservation& r : view.reservations)
        if (r.job == job.id) previous = &r;
      // Not for a job with a demand on shared nodes: its nodes being open is not their having
      // its cores free, and the allocator has just said they do not (alloc/node_sharing.h).
      if (previous && !request.demand && previous->start <= view.now &&
          previous->nodes.is_subset_of(free)) {
        start(i, Placement{previous->nodes, std::nullopt, "reserved"});
        continue;
      }
      std::vector<const RunningJob*> running;
      running.reserve(view.running.size() + started.size());
      for (const RunningJob& r : view.running) running.push_back(&r);
      for (const RunningJob& r : started) running.push_back(&r);
      auto projection = earliest_fit(view.now, free, running, request, allocator);
      // Keep the earlier promise when the allocator would now answer later (an allocator may
      // refuse a superset of nodes it once chose, e.g. when a unit it needs whole is now shared):
      // the reserved nodes are still free then, and the job will start on them.
      std::optional<NodeSet> at_previous;
      if (previous && (!projection || previous->start < projection->start)) {
        at_previous = free;
        for (const RunningJob* r : running)
          if (std::max(view.now, r->expected_end) <= previous->start) *at_previous |= r->nodes;
        if (!previous->nodes.is_subset_of(*at_previous)) at_previous.reset();
      }
      if (at_previous) {
        head = Head{i, *previous, std::move(*at_previous), {}};
      } else if (projection) {
        head = Head{i,
                    {job.id, projection->start, std::move(projection->placement.nodes)},
                    std::move(projection->free_at_start),
                    {}};
      } else {
        continue;  // can never fit: the caller rejects such jobs up front
      }
      head->outside = free - head->reservation.nodes;
      continue;
    }
    Reservation& promise = head->reservation;
    if (view.now + job.time_limit <= promise.start) {
      if (auto p = allocator.allocate(free, request)) start(i, std::move(*p));
      continue;
    }
    if (head->outside.count() >= request.nodes) {
      if (auto p = allocator.allocate(head->outside, request)) {
        head->projected -= p->nodes;
        start(i, std::move(*p));
        continue;
      }
    }
    const Request& head_request = view.queue[head->index]->request;
    // The job's nodes leave the projected set; if too few would remain, no placement can help.
    if (head->projected.count() - request.nodes < head_request.nodes) continue;
    auto p = allocator.allocate(free, request);
    if (!p) continue;
    NodeSet projected = head->projected - p->nodes;
    if (projected.count() < head_request.nodes) continue;
    auto moved = allocator.allocate(projected, head_request);
    if (!moved) continue;
    promise.nodes = std::move(moved->nodes);
    head->projected = std::move(projected);
    head->outside = free - promise.nodes;
    start(i, std::move(*p));
  }
  if (head) out.reservations.push_back(std::move(head->reservation));
  return out;
}

}  // namespace trellis
