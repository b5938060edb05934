#include "alloc/mc/mc_allocator.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <tuple>

#include "alloc/baseline.h"
#include "alloc/mc/free_prefix_sums.h"
#include "alloc/registry.h"
#include "topology/curve.h"

namespace trellis {

long mc_cost(const std::vector<int>& takes_per_shell) {
  long cost = 0;
  for (size_t r = 0; r < takes_per_shell.size(); ++r)
    cost += static_cast<long>(r) * takes_per_shell[r];
  return cost;
}

Mc1x1Allocator::Mc1x1Allocator(const Machine& machine, bool wrap)
    : Allocator(machine), wrap_(wrap) {
  const Torus& t = *machine.torus();
  for (int a = 0; a < t.dims(); ++a) wraps_[a] = wrap_ && t.wraps(a);
  Curve snake = *Curve::make(CurveKind::kSnake, t);
  snake_rank_.resize(t.node_count());
  by_snake_.resize(t.node_count());
  for (int r = 0; r < t.node_count(); ++r) {
    by_snake_[r] = snake.node_at(r);
    snake_rank_[snake.node_at(r)] = r;
  }
}

int Mc1x1Allocator::linf(const Coords& a, const Coords& b) const {
  const Torus& t = *machine().torus();
  int d = 0;
  for (int ax = 0; ax < t.dims(); ++ax) {
    int s = std::abs(a[ax] - b[ax]);
    if (wraps_[ax]) s = std::min(s, t.extent(ax) - s);
    d = std::max(d, s);
  }
  return d;
}

int Mc1x1Allocator::l1(const Coords& a, const Coords& b) const {
  const Torus& t = *machine().torus();
  int d = 0;
  for (int ax = 0; ax < t.dims(); ++ax) {
    int s = std::abs(a[ax] - b[ax]);
    if (wraps_[ax]) s = std::min(s, t.extent(ax) - s);
    d += s;
  }
  return d;
}

namespace {

std::array<int, 3> xyz(const Coords& c) {
  return {c[0], c[1], c[2]};
}

}  // namespace

Mc1x1Allocator::Choice Mc1x1Allocator::best_centre(const NodeSet& free, int k) const {
  const Torus& t = *machine().torus();
  FreePrefixSums sums(t, free);
  int max_radius = 0;
  for (int a = 0; a < t.dims(); ++a) max_radius = std::max(max_radius, t.extent(a));
  Choice best;
  for (NodeId centre : by_snake_) {  // snake order: a strict '<' keeps the smallest rank on ties
    if (!free.test(centre)) continue;
    const auto c = xyz(t.coords(centre));
    long cost = 0;
    int need = k, inside = 0, r = 0;
    for (; need > 0 && r <= max_radius; ++r) {
      int cube = sums.count_cube(c, r, wraps_);
      int take = std::min(cube - inside, need);
      cost += static_cast<long>(r) * take;
      need -= take;
      inside = cube;
      if (best.centre >= 0 && cost >= best.cost && need > 0) break;  // cannot win any more
    }
    if (need > 0) continue;
    if (best.centre < 0 || cost < best.cost) best = {centre, cost, r - 1};
  }
  return best;
}

std::vector<int> Mc1x1Allocator::shell_counts(const NodeSet& free, NodeId centre,
                                              int max_radius) const {
  const Torus& t = *machine().torus();
  FreePrefixSums sums(t, free);
  const auto c = xyz(t.coords(centre));
  std::vector<int> counts;
  int inside = 0;
  for (int r = 0; r <= max_radius; ++r) {
    int cube = sums.count_cube(c, r, wraps_);
    counts.push_back(cube - inside);
    inside = cube;
  }
  return counts;
}

Result<Placement> Mc1x1Allocator::allocate(const NodeSet& free, const Request& request) const {
  if (auto ok = require_free_count(free, request.nodes); !ok) return ok.error();
  const Torus& t = *machine().torus();
  Choice choice = best_centre(free, request.nodes);
  assert(choice.centre >= 0);
  // The nodes: everything free inside the winning cube, ordered by (shell, L1, snake rank).
  const Coords c = t.coords(choice.centre);
  std::vector<std::tuple<int, int, int, NodeId>> cands;
  free.for_each([&](NodeId id) {
    Coords p = t.coords(id);
    int d = linf(c, p);
    if (d <= choice.radius) cands.emplace_back(d, l1(c, p), snake_rank_[id], id);
  });
  std::partial_sort(cands.begin(), cands.begin() + request.nodes, cands.end());
  Placement p{NodeSet(free.size()), std::nullopt, {}};
  long cost = 0;
  for (int i = 0; i < request.nodes; ++i) {
    p.nodes.set(std::get<3>(cands[i]));
    cost += std::get<0>(cands[i]);
  }
  assert(cost == choice.cost);
  Coords cc = t.coords(choice.centre);
  std::string where;
  for (int a = 0; a < t.dims(); ++a) {
    if (a > 0) where += ',';
    where += std::to_string(cc[a]);
  }
  p.note = "MC centre (" + where + "), cost " + std::to_string(cost) + ", shells 0.." +
           std::to_string(choice.radius);
  return p;
}

void register_mc_allocators(AllocatorRegistry& registry) {
  registry.add(
      {"mc1x1",
       "MC: the free nodes nearest a well-chosen centre, in growing square shells (option "
       "wrap=yes)",
       "mesh/torus",
       [](const Machine& m, const AllocatorOptions& given) -> Result<std::unique_ptr<Allocator>> {
         ComponentOptions o = given.for_component("mc1x1");
         if (auto ok = o.only({"wrap"}); !ok) return ok.error();
         if (!m.torus() || m.torus()->dims() > 3)
           return fail("allocator 'mc1x1' needs a mesh or torus of 1 to 3 axes, not " +
                       m.describe());
         auto wrap = o.choice("wrap", "no", {"yes", "no"});
         if (!wrap) return wrap.error();
         return make_allocator<Mc1x1Allocator>(m, *wrap == "yes");
       }});
}

}  // namespace trellis
