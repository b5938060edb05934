// NodeSharingAllocator: places jobs on nodes that other jobs share, on top of a machine's own
// allocator (the match policy over alloc/node_pool.h's state). The scheduling core installs it
// when the machine's nodes have an inventory and owns the pool it reads; the policies see only an
// Allocator, as they always have.
//
// A request without a demand (core/request.h: Request::demand) takes whole nodes: the wrapped
// allocator places it among the nodes that are free and idle (nothing given out on them), so a
// box on a torus or a few switches on a fat tree stay what they were. A request with a demand
// takes, on each node, the cores, memory and GPUs of the demand: a job of one node goes where it
// fits best (NodePool::best_fit: packing small jobs onto few nodes keeps whole nodes free); a job
// of several nodes is placed by the wrapped allocator among the nodes the demand fits (so it
// keeps its locality on the interconnect), and each node's part is chosen there
// (NodePool::choose). The placement carries the grants.
//
// The free set a policy hands in holds every node with something left; the pool decides which
// of them a request fits. Within one pass a policy takes a placement's nodes out of its free set,
// so it starts at most one job per shared node per call: the core calls the policy again while
// shared starts keep coming (sched/batch_core.h).
#pragma once

#include "alloc/allocator.h"
#include "alloc/node_pool.h"

namespace trellis {

class NodeSharingAllocator final : public Allocator {
 public:
  // `inner` and `pool` must outlive this; `machine` is inner's.
  NodeSharingAllocator(const Machine& machine, const Allocator& inner, const NodePool& pool);

  std::string_view name() const override { return inner_.name(); }
  Status check(const Request& request) const override { return inner_.check(request); }
  Result<Placement> allocate(const NodeSet& free, const Request& request) const override;
  const Curve* node_order() const override { return inner_.node_order(); }

  // The free set at the start of a policy call. The pool learns of a call's placements only
  // after the call, so within it a job of one node that would open an idle node, while a node
  // placed on earlier in the call might still hold it, waits for the next call (the core calls
  // the policy again while shared starts keep coming): small jobs pack instead of spreading.
  void begin_round(const NodeSet& free) { round_free_ = free; }

 private:
  const Allocator& inner_;
  const NodePool& pool_;
  NodeSet round_free_;
};

}  // namespace trellis
