#include <unordered_map>
#include <vector>

#include "sched/availability_profile.h"
#include "sched/backfill.h"

namespace trellis {

// Each pass rebuilds the profile from the running jobs and the reservations of the previous pass,
// then takes the queued jobs in order and moves each to the earliest slot that fits, counting its
// own reserved nodes as free (the "compression" of Mu'alem & Feitelson). Its old slot is always
// still possible (every other reservation is in the profile and running jobs end no later than
// expected), so no reservation ever moves later; the search stops at the old start, and the
// profile changes only for jobs that move. Jobs without a reservation (new arrivals) are placed
// after those before them in the queue.
Schedule ConservativePolicy::schedule(const SchedulerView& view, const Allocator& allocator) const {
  Schedule out;
  std::unordered_map<JobId, size_t> queue_index;
  queue_index.reserve(view.queue.size());
  for (size_t i = 0; i < view.queue.size(); ++i) queue_index.emplace(view.queue[i]->id, i);

  // Keep the previous reservations that still apply: job still queued, start not in the past.
  std::vector<Reservation> kept;
  std::vector<Seconds> durations;
  std::vector<long> kept_of(view.queue.size(), -1);
  for (const Reservation& r : view.reservations) {
    auto it = queue_index.find(r.job);
    if (it == queue_index.end() || r.start < view.now || kept_of[it->second] >= 0) continue;
    kept_of[it->second] = static_cast<long>(kept.size());
    kept.push_back(r);
    durations.push_back(view.queue[it->second]->time_limit);
  }
  AvailabilityProfile profile(view.now, view.free, view.running, kept, durations);

  for (size_t i = 0; i < view.queue.size(); ++i) {
    const Job& job = *view.queue[i];
    std::optional<Projection> projection;
    bool in_profile = false;  // the slot is already reserved in the profile
    if (kept_of[i] >= 0) {
      // Look for an earlier slot, counting the job's own reserved nodes as free; the profile is
      // only touched when the job moves.
      Reservation& old = kept[static_cast<size_t>(kept_of[i])];
      Seconds old_end = old.start + job.time_limit;
      projection = profile.find(job.request, job.time_limit, allocator, old.start,
                                {old.start, old_end, &old.nodes, job.request.nodes});
      if (projection) {
        profile.release(old.start, old_end, old.nodes);
      } else {
        projection = Projection{old.start, Placement{std::move(old.nodes), std::nullopt, {}}, {}};
        in_profile = true;
      }
    } else {
      projection = profile.find(job.request, job.time_limit, allocator);
      if (!projection) continue;  // can never fit: the caller rejects such jobs up front
    }
    if (!in_profile)
      profile.reserve(projection->start, projection->start + job.time_limit,
                      projection->placement.nodes);
    if (projection->start == view.now) {
      out.starts.push_back({i, std::move(projection->placement)});
    } else {
      out.reservations.push_back(
          {job.id, projection->start, std::move(projection->placement.nodes)});
    }
  }
  return out;
}

}  // namespace trellis
