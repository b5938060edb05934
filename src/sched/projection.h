// Projection: when and where could a request start if nothing else started? The running jobs
// are released in the order of their expected ends and the allocator is asked, at each release,
// whether the request fits the projected free set. A free-count check only filters out times at
// which the request surely cannot fit; the answer always comes from the allocator, so a
// reservation for a box is a set of nodes that can really hold the box.
#pragma once

#include <optional>
#include <vector>

#include "sched/policy.h"

namespace trellis {

struct Projection {
  Seconds start = 0;
  Placement placement;
  NodeSet free_at_start;  // every node projected free at `start` (the placement is a subset)
};

// `by_end` lists the running jobs (by pointer, so that callers can add jobs they have just
// started without copying node sets).
// The earliest time >= now at which `request` fits on `free` plus the nodes of the running jobs
// that have ended by then. Nullopt when it does not fit even after every running job ends.
// At a time after now, the placement is first sought among the released nodes only, so that the
// nodes free now stay available for backfilling (classic EASY's "extra nodes"); only when the
// request does not fit there may it take nodes that are free now.
std::optional<Projection> earliest_fit(Seconds now, const NodeSet& free,
                                       std::vector<const RunningJob*> by_end,
                                       const Request& request, const Allocator& allocator);

}  // namespace trellis
