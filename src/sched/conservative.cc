#include <unordered_map>
#include <vector>

#include "sched/availability_profile.h"
#include "sched/backfill.h"

namespace trellis {

// Each pass rebuilds the profile from the running jobs and the reservations of the previous pass,
// then takes the queued jobs in order: a job's own reservation is given back and the job is placed
// at the earliest fit. Its old slot is still free then (every other reservation is in the profile
// and running jobs end no later than expected), so no reservation ever moves later: the
// "compression" of Mu'alem & Feitelson. Jobs without a reservation (new arrivals) are placed after
// those before them in the queue.
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
    if (kept_of[i] >= 0) {
      const Reservation& old = kept[static_cast<size_t>(kept_of[i])];
      profile.release(old.start, old.start + job.time_limit, old.nodes);
    }
    auto projection = profile.find(job.request, job.time_limit, allocator);
    if (!projection) continue;  // can never fit: the caller rejects such jobs up front
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
