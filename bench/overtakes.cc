#include "bench/overtakes.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

namespace trellis::bench {
namespace {

// What happens to a job at an instant, in the order it is taken at one instant: nodes freed
// first, then arrivals, then a wait ended by a cancel, then starts.
enum class Kind { kEnd = 0, kSubmit = 1, kCancelled = 2, kStart = 3 };

struct Happening {
  Seconds time;
  Kind kind;
  size_t job;  // index into the jobs
  bool operator<(const Happening& other) const {
    return std::tie(time, kind, job) < std::tie(other.time, other.kind, other.job);
  }
};

Seconds arrival(const StoredJob& job) {
  return job.attempt > 0 ? std::min(job.submit_time, job.start_time) : job.submit_time;
}

}  // namespace

int64_t count_overtakes(const std::vector<StoredJob>& jobs, int node_count, int look) {
  // Jobs in id order, so that equal times order by id.
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return jobs[a].id < jobs[b].id; });
  std::vector<Happening> happenings;
  for (size_t rank = 0; rank < order.size(); ++rank) {
    const StoredJob& job = jobs[order[rank]];
    // A pass's instant is taken before it reads the queue, so a job submitted meanwhile may
    // start "before" its submission: it arrived by then.
    happenings.push_back({arrival(job), Kind::kSubmit, rank});
    if (job.attempt > 0) {
      happenings.push_back({job.start_time, Kind::kStart, rank});
      if (job.end_time > 0) happenings.push_back({job.end_time, Kind::kEnd, rank});
    } else if (job.end_time > 0) {
      happenings.push_back({job.end_time, Kind::kCancelled, rank});
    }
  }
  std::sort(happenings.begin(), happenings.end());
  // Waiting jobs by (submission, id): the earliest first.
  std::set<std::pair<Seconds, size_t>> waiting;
  int free = node_count;
  int64_t overtakes = 0;
  for (const Happening& h : happenings) {
    const StoredJob& job = jobs[order[h.job]];
    const std::pair<Seconds, size_t> key{arrival(job), h.job};
    switch (h.kind) {
      case Kind::kEnd:
        free += static_cast<int>(job.nodes.size());
        break;
      case Kind::kSubmit:
        waiting.insert(key);
        break;
      case Kind::kCancelled:
        waiting.erase(key);
        break;
      case Kind::kStart: {
        int looked = 0;
        for (auto it = waiting.begin(); it != waiting.end() && *it < key && looked < look;
             ++it, ++looked) {
          if (jobs[order[it->second]].request.nodes <= free) {
            ++overtakes;
            break;
          }
        }
        waiting.erase(key);
        free -= static_cast<int>(job.nodes.size());
        break;
      }
    }
  }
  return overtakes;
}

}  // namespace trellis::bench
