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
  starts_.push_back(now);
  frees_.push_back(free);
  for (const Change& c : changes) {
    if (c.time > starts_.back()) {
      counts_.push_back(frees_.back().count());
      starts_.push_back(c.time);
      NodeSet next = frees_.back();
      frees_.push_back(std::move(next));
    }
    if (c.frees) {
      frees_.back() |= *c.nodes;
    } else {
      assert(c.nodes->is_subset_of(frees_.back()));
      frees_.back() -= *c.nodes;
    }
  }
  counts_.push_back(frees_.back().count());
}

std::optional<Projection> AvailabilityProfile::find(const Request& request, Seconds duration,
                                                    const Allocator& allocator, Seconds before,
                                                    const HeldSlot& held) const {
  const int need = request.nodes;
  const size_t n = starts_.size();
  const Seconds* starts = starts_.data();
  const int* counts = counts_.data();
  // Segment k lies inside the held interval (segments never straddle a reservation's ends).
  auto held_at = [&](size_t k) {
    return held.nodes && starts[k] >= held.start && starts[k] < held.end;
  };
  auto count_at = [&](size_t k) { return counts[k] + (held_at(k) ? held.count : 0); };
  for (size_t i = 0; i < n && starts[i] < before; ++i) {
    if (counts[i] < need && count_at(i) < need) continue;
    Seconds end = starts[i] + duration;
    // First pass on counts only: a short segment inside the window rules out every start up to it.
    size_t k = i + 1;
    while (k < n && starts[k] < end && (counts[k] >= need || count_at(k) >= need)) ++k;
    if (k < n && starts[k] < end) {
      i = k;  // the loop's ++i moves past the short segment
      continue;
    }
    // The nodes free throughout the window (counted once: word ANDs are cheaper than counts).
    NodeSet window = frees_[i];
    if (held_at(i)) window |= *held.nodes;
    for (size_t j = i + 1; j < k; ++j) {
      if (held_at(j))
        window &= frees_[j] | *held.nodes;
      else
        window &= frees_[j];
    }
    if (window.count() < need) continue;
    if (auto p = allocator.allocate(window, request))
      return Projection{starts[i], std::move(*p), std::move(window)};
  }
  return std::nullopt;
}

size_t AvailabilityProfile::split_at(Seconds t) {
  auto it = std::upper_bound(starts_.begin(), starts_.end(), t);
  assert(it != starts_.begin());
  size_t before = static_cast<size_t>(it - starts_.begin()) - 1;
  if (starts_[before] == t) return before;
  long at = static_cast<long>(before) + 1;
  starts_.insert(starts_.begin() + at, t);
  counts_.insert(counts_.begin() + at, counts_[before]);
  NodeSet copy = frees_[before];
  frees_.insert(frees_.begin() + at, std::move(copy));
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
    assert(nodes.is_subset_of(frees_[i]));
    frees_[i] -= nodes;
    counts_[i] -= taken;
  }
}

void AvailabilityProfile::release(Seconds start, Seconds end, const NodeSet& nodes) {
  auto [first, last] = cover(start, end);
  int given = nodes.count();
  for (size_t i = first; i < last; ++i) {
    assert(!nodes.intersects(frees_[i]));
    frees_[i] |= nodes;
    counts_[i] += given;
  }
}

}  // namespace trellis
