// AvailabilityProfile: which nodes are free when, from now on, as conservative backfilling needs
// it. Time is cut into segments [t_i, t_i+1) (the last one open-ended), each with its free set and
// free count; running jobs free their nodes at their expected ends and reservations take nodes
// out of the segments they cover.
//
// find() looks for the earliest segment start at which a request fits on the nodes that stay free
// for its whole duration. Free counts are checked first so that a window containing a segment with
// too few free nodes is skipped in one step (and every start that would include that segment with
// it); the allocator decides only on windows that pass, so reservations respect shapes. With Q
// queued jobs and S segments a pass costs O(Q*S) count comparisons plus the allocator calls.
#pragma once

#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "sched/policy.h"
#include "sched/projection.h"

namespace trellis {

// Nodes a job already holds in a profile over [start, end) (a reservation of it): find() may
// count them as free, so a job can look for a better slot without taking its old one out first.
struct HeldSlot {
  Seconds start = 0, end = 0;
  const NodeSet* nodes = nullptr;
  int count = 0;
};

class AvailabilityProfile {
 public:
  // Running jobs free their nodes at max(now, expected_end); each reservation holds its nodes over
  // [start, start + duration_of(reservation)). Reservations must not overlap each other or running
  // jobs (a policy's own previous output never does).
  AvailabilityProfile(Seconds now, const NodeSet& free, std::span<const RunningJob> running,
                      std::span<const Reservation> reservations = {},
                      std::span<const Seconds> reservation_durations = {});

  // The earliest start before `before` at which `request` fits on nodes free during
  // [start, start + duration), the `held` nodes included. Nullopt when there is none (with the
  // default `before`: it never fits, even at the end of the profile).
  std::optional<Projection> find(const Request& request, Seconds duration,
                                 const Allocator& allocator,
                                 Seconds before = std::numeric_limits<Seconds>::infinity(),
                                 const HeldSlot& held = HeldSlot()) const;

  // Takes `nodes` out of the free sets over [start, end). The nodes must be free there.
  void reserve(Seconds start, Seconds end, const NodeSet& nodes);
  // Gives `nodes` back over [start, end): undoes a reserve().
  void release(Seconds start, Seconds end, const NodeSet& nodes);

  // Free nodes at the profile's first instant (now), after the reservations made so far.
  const NodeSet& free_now() const { return frees_.front(); }
  size_t segment_count() const { return starts_.size(); }

 private:
  // Index of the segment starting at t, splitting the one containing t when needed.
  size_t split_at(Seconds t);
  // The segment range [first, last) covering [start, end), splitting at both ends.
  std::pair<size_t, size_t> cover(Seconds start, Seconds end);

  // Segment i is [starts_[i], starts_[i+1]) with free set frees_[i] of counts_[i] nodes. Kept as
  // parallel arrays so that the count scans of find() run over dense memory.
  std::vector<Seconds> starts_;  // sorted; starts_[0] == now
  std::vector<int> counts_;
  std::vector<NodeSet> frees_;
};

}  // namespace trellis
