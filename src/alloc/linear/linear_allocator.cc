#include "alloc/linear/linear_allocator.h"

#include "alloc/baseline.h"
#include "alloc/registry.h"

namespace trellis {

LinearAllocator::LinearAllocator(const Machine& machine, Curve curve, LinearPolicy policy,
                                 bool min_span_fallback, std::string name)
    : Allocator(machine),
      curve_(std::move(curve)),
      policy_(policy),
      min_span_fallback_(min_span_fallback),
      name_(std::move(name)) {}

Result<Placement> LinearAllocator::allocate(const NodeSet& free, const Request& request) const {
  if (auto ok = require_free_count(free, request.nodes); !ok) return ok.error();
  const int k = request.nodes;
  const NodeSet free_ranks = curve_.to_ranks(free);
  Placement p{NodeSet(free.size()), std::nullopt, {}};
  if (policy_ == LinearPolicy::kSortedFreeList) {
    int left = k;
    for (int r = free_ranks.next(0); left > 0; r = free_ranks.next(r + 1), --left)
      p.nodes.set(curve_.node_at(r));
    return p;
  }
  const bool ring = curve_.closes_into_ring();
  IntervalFit fit = policy_ == LinearPolicy::kFirstFit  ? IntervalFit::kFirst
                    : policy_ == LinearPolicy::kBestFit ? IntervalFit::kBest
                                                        : IntervalFit::kSumOfSquares;
  std::vector<int> ranks;
  if (auto iv = choose_interval(free_intervals(free_ranks, ring), k, fit)) {
    ranks = place_in_interval(*iv, k, curve_.size());
  } else if (min_span_fallback_) {
    ranks = min_span(free_ranks, k, ring);
    p.note = "no free interval of " + std::to_string(k) + " along the curve: min span " +
             std::to_string(curve_span(ranks, curve_.size(), ring));
  } else {
    return does_not_fit_now();
  }
  for (int r : ranks) p.nodes.set(curve_.node_at(r));
  return p;
}

void register_linear_allocators(AllocatorRegistry& registry) {
  struct PolicyName {
    LinearPolicy policy;
    const char* prefix;
    const char* summary;
  };
  static const PolicyName kPolicies[] = {
      {LinearPolicy::kSortedFreeList, "sorted-free-list-", "lowest free ranks along the "},
      {LinearPolicy::kFirstFit, "linear-firstfit-", "first-fit interval (min-span fallback) on "},
      {LinearPolicy::kBestFit, "linear-bestfit-", "best-fit interval (min-span fallback) on "},
      {LinearPolicy::kSumOfSquares, "linear-sumsq-",
       "sum-of-squares interval (min-span fallback) on "},
  };
  static const CurveKind kCurves[] = {CurveKind::kRowMajor, CurveKind::kSnake, CurveKind::kHilbert};
  for (const auto& pn : kPolicies) {
    for (CurveKind kind : kCurves) {
      std::string name = pn.prefix + std::string(to_string(kind));
      LinearPolicy policy = pn.policy;
      bool takes_fallback = policy != LinearPolicy::kSortedFreeList;
      registry.add({name, pn.summary + std::string(to_string(kind)) + " curve",
                    kind == CurveKind::kRowMajor ? "any" : "mesh/torus",
                    [name, policy, kind, takes_fallback](
                        const Machine& m,
                        const AllocatorOptions& given) -> Result<std::unique_ptr<Allocator>> {
                      ComponentOptions o = given.for_component(name);
                      if (auto ok = takes_fallback ? o.only({"fallback"}) : o.only({}); !ok)
                        return ok.error();
                      auto fallback = o.choice("fallback", "minspan", {"minspan", "fail"});
                      if (!fallback) return fallback.error();
                      auto curve = Curve::for_machine(kind, m);
                      if (!curve) return fail(o.subject() + ": " + curve.error().message);
                      return make_allocator<LinearAllocator>(m, std::move(*curve), policy,
                                                             *fallback == "minspan", name);
                    }});
    }
  }
}

}  // namespace trellis
