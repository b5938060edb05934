// Link loads of a job's all-to-all traffic: every ordered pair of its nodes sends one message,
// routed as the machine routes it, and a link's load is the number of messages that cross it.
// This is the communication pattern SST's scheduler assumes by default for its per-job
// congestion and hop-bytes figures; the run-time models (sim/runtime_model.h) build on it.
//
//   mesh/torus  dimension-order routes (topology/route.h: all x hops, then y, then z, each axis
//               the short way round when it wraps, ties +). A link is one direction out of one
//               router: id = router * 2 * dims + direction (direction 2k is +k, 2k+1 is -k),
//               capacity 1.
//   fat tree    up to the lowest common switch and down again. A link joins a subtree (a node, or
//               a level-l switch) to its parent switch, one per direction; its capacity is the
//               number of nodes under it (a full-bisection tree: links fatten towards the root),
//               so loads are compared per unit of capacity. Flat machines are one-level trees.
//
// Computed per axis from coordinate histograms, not pair by pair: a message's phase on axis k
// runs along the line fixed by its destination's coordinates before k and its source's after k,
// so the traffic on a line is (sources on it by position) x (destinations by position), spread
// over the links with difference arrays. A 1,000-node job costs about as much as its lines, not
// its million pairs. Tests check it against routing every pair (dimension_order_route).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/node_set.h"
#include "topology/machine.h"

namespace trellis {

struct LinkLoad {
  int64_t link = 0;      // link id, as above
  int64_t messages = 0;  // messages crossing it
};

// The links the traffic of `nodes` crosses, each once, in increasing link id (no zero loads).
std::vector<LinkLoad> all_to_all_link_loads(const Machine& machine, const NodeSet& nodes);

// The same loads, computed with buffers kept from call to call: a simulator measures every job it
// starts, and allocating per job cost more than the arithmetic. all_to_all_link_loads uses it.
class LinkLoadCalculator {
 public:
  explicit LinkLoadCalculator(const Machine& machine);
  ~LinkLoadCalculator();
  LinkLoadCalculator(const LinkLoadCalculator&) = delete;
  LinkLoadCalculator& operator=(const LinkLoadCalculator&) = delete;

  // The links the traffic of `nodes` crosses, each once, in no particular order (no zero loads);
  // valid until the next call.
  const std::vector<LinkLoad>& loads(const NodeSet& nodes);

 private:
  struct Scratch;
  const Machine& machine_;
  std::unique_ptr<Scratch> scratch_;
  std::vector<LinkLoad> loads_;
};

// Link ids are below this bound on `machine` (for dense per-link arrays).
int64_t link_id_bound(const Machine& machine);

// The capacity of `link`: 1 on a mesh/torus, the nodes under the link's subtree on a fat tree.
int64_t link_capacity(const Machine& machine, int64_t link);

// The most loaded link of `loads` per unit of capacity (0 when there are none).
double max_link_load(const Machine& machine, const std::vector<LinkLoad>& loads);

}  // namespace trellis
