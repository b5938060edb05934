#include "sched/availability_profile.h"

#include <algorithm>
#include <cassert>

namespace trellis {

namespace {

// A change of the free set at `time`: nodes come free (running job ends, reservation ends) or are
// taken (reservation starts).
struct Change {
  Seconds time;
  const NodeSet* nodes;
  bool frees;
};

}  // namespace

AvailabilityProfile::AvailabilityProfile(Seconds now, const NodeSet& free,
                                         std::span<const RunningJob> running,
                                         std::span<const Reservation> reservations,
                                         std::span<const Seconds> reservation_durations) {
  assert(reservations.size() == reservation_durations.size());
  std::vector<Change> changes;
  changes.reserve(running.size() + 2 * reservations.size());
  for (const RunningJob& r : running)
    changes.push_back({std::max(now, r.expected_end), &r.nodes, true});
  for (size_t i = 0; i < reservations.size(); ++i) {
    const Reservation& r = reservations[i];
    changes.push_back({r.start, &r.nodes, false});
    changes.push_back({r.start + reservation_durations[i], &r.nodes, true});
  }
  // At equal times nodes come free before they are taken, so back-to-back use is allowed.
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return a.time != b.time ? a.time < b.time : a.frees > b.frees;
  });
  segments_.push_back({now, free, 0});
  for (const Change& c : changes) {
    if (c.time > segments_.back().start) {
      segments_.back().free_count = segments_.back().free.count();
      Segment next{c.time, segments_.back().free, 0};
      segments_.push_back(std::move(next));
    }
    if (c.frees) {
      segments_.back().free |= *c.nodes;
    } else {
      assert(c.nodes->is_subset_of(segments_.back().free));
      segments_.back().free -= *c.nodes;
    }
  }
  segments_.back().free_count = segments_.back().free.count();
}

std::optional<Projection> AvailabilityProfile::find(const Request& request, Seconds duration,
                                                    const Allocator& allocator, Seconds before,
                                                    const HeldSlot& held) const {
  const int need = request.nodes;
  const size_t n = segments_.size();
  // Segment k lies inside the held interval (segments never straddle a reservation's ends).
  auto held_at = [&](size_t k) {
    return held.nodes && segments_[k].start >= held.start && segments_[k].start < held.end;
  };
  auto count_at = [&](size_t k) { return segments_[k].free_count + (held_at(k) ? held.count : 0); };
  for (size_t i = 0; i < n && segments_[i].start < before; ++i) {
    if (count_at(i) < need) continue;
    Seconds end = segments_[i].start + duration;
    // First pass on counts only: a short segment inside the window rules out every start up to it.
    size_t k = i + 1;
    while (k < n && segments_[k].start < end && count_at(k) >= need) ++k;
    if (k < n && segments_[k].start < end) {
      i = k;  // the loop's ++i moves past the short segment
      continue;
    }
    NodeSet window = segments_[i].free;
    if (held_at(i)) window |= *held.nodes;
    bool enough = window.count() >= need;
    for (size_t j = i + 1; j < k && enough; ++j) {
      if (held_at(j))
        window &= segments_[j].free | *held.nodes;
      else
        window &= segments_[j].free;
      enough = window.count() >= need;
    }
    if (!enough) continue;
    if (auto p = allocator.allocate(window, request))
      return Projection{segments_[i].start, std::move(*p), std::move(window)};
  }
  return std::nullopt;
}

size_t AvailabilityProfile::split_at(Seconds t) {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), t,
                             [](Seconds v, const Segment& s) { return v < s.start; });
  assert(it != segments_.begin());
  size_t before = static_cast<size_t>(it - segments_.begin()) - 1;
  if (segments_[before].start == t) return before;
  Segment copy = segments_[before];
  copy.start = t;
  segments_.insert(segments_.begin() + static_cast<long>(before) + 1, std::move(copy));
  return before + 1;
}

std::pair<size_t, size_t> AvailabilityProfile::cover(Seconds start, Seconds end) {
  size_t first = split_at(start);
  size_t last = end > start ? split_at(end) : first;  // a later split leaves `first` in place
  return {first, last};
}

void AvailabilityProfile::reserve(Seconds start, Seconds end, const NodeSet& nodes) {
  auto [first, last] = cover(start, end);
  int taken = nodes.count();
  for (size_t i = first; i < last; ++i) {
    assert(nodes.is_subset_of(segments_[i].free));
    segments_[i].free -= nodes;
    segments_[i].free_count -= taken;
  }
}

void AvailabilityProfile::release(Seconds start, Seconds end, const NodeSet& nodes) {
  auto [first, last] = cover(start, end);
  int given = nodes.count();
  for (size_t i = first; i < last; ++i) {
    assert(!nodes.intersects(segments_[i].free));
    segments_[i].free |= nodes;
    segments_[i].free_count += given;
  }
}

}  // namespace trellis
