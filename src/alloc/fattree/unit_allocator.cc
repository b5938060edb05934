#include "alloc/fattree/unit_allocator.h"

#include <algorithm>
#include <cassert>

#include "alloc/baseline.h"
#include "alloc/registry.h"

namespace trellis {

int minimum_unit_size(const FatTree& tree) {
  const int leaf = tree.fanouts()[0];
  const int cap = tree.node_count() <= 4096 ? 4 : 8;
  if (leaf <= cap) return leaf;
  int unit = cap;
  while (leaf % unit != 0) --unit;
  return unit;
}

FatTreeUnitAllocator::FatTreeUnitAllocator(const Machine& machine, int unit_size)
    : Allocator(machine), unit_size_(unit_size) {
  const FatTree& t = tree();
  unit_count_ = t.node_count() / unit_size_;
  units_under_.push_back(1);
  for (int level = 1; level <= t.levels(); ++level)
    units_under_.push_back(t.nodes_under(level) / unit_size_);
}

int FatTreeUnitAllocator::free_in_unit(const NodeSet& free, int unit) const {
  int n = 0;
  const NodeId end = (unit + 1) * unit_size_;
  for (NodeId id = free.next(unit * unit_size_); id >= 0 && id < end; id = free.next(id + 1)) ++n;
  return n;
}

UnitState FatTreeUnitAllocator::unit_state(const NodeSet& free, int unit) const {
  int n = free_in_unit(free, unit);
  return n == unit_size_ ? UnitState::kFree : n == 0 ? UnitState::kAllocated : UnitState::kBusy;
}

int FatTreeUnitAllocator::free_unit_count(const NodeSet& free) const {
  int n = 0;
  for (int u = 0; u < unit_count_; ++u) n += unit_state(free, u) == UnitState::kFree;
  return n;
}

int FatTreeUnitAllocator::unit_hops(int a, int b) const {
  if (a == b) return 0;
  int level = 1;
  while (a / units_under_[level] != b / units_under_[level]) ++level;
  return 2 * level - 1;
}

namespace {

// A subtree's worth when it holds s chosen units: pairs kept below its switch (more is fewer
// hops), then best fit (minus the free units of every subtree touched).
struct Score {
  long pairs = 0;
  long fit = 0;
  friend bool operator<(const Score& a, const Score& b) {
    return a.pairs != b.pairs ? a.pairs < b.pairs : a.fit < b.fit;
  }
};

struct DpNode {
  int free_units = 0;                  // free units in the subtree
  std::vector<Score> best;             // best[s] for s = 0 .. capacity (capped at the count)
  std::vector<int> children;           // indices into the arena
  std::vector<std::vector<int>> take;  // take[i][s]: units from child i when children 0..i hold s
};

class UnitDp {
 public:
  UnitDp(const std::vector<bool>& free_unit, const std::vector<int>& units_under, int count)
      : free_unit_(free_unit), units_under_(units_under), count_(count) {}

  int solve(int level, int index) {
    const int id = static_cast<int>(arena_.size());
    arena_.emplace_back();
    if (level == 0) {
      arena_[id].best.assign(free_unit_[index] ? 2 : 1, Score{});
      arena_[id].free_units = free_unit_[index] ? 1 : 0;
      return id;
    }
    const int fan = units_under_[level] / units_under_[level - 1];
    std::vector<Score> acc(1, Score{});
    std::vector<int> children;
    std::vector<std::vector<int>> take;
    int free_here = 0;
    for (int c = 0; c < fan; ++c) {
      int child = solve(level - 1, index * fan + c);
      free_here += arena_[child].free_units;
      const std::vector<Score>& cb = arena_[child].best;
      const int size = std::min<int>(acc.size() + cb.size() - 1, count_ + 1);
      std::vector<Score> next(size);
      std::vector<bool> seen(size, false);
      std::vector<int> t(size, 0);
      for (int a = 0; a < static_cast<int>(acc.size()); ++a)
        for (int b = 0; b < static_cast<int>(cb.size()) && a + b < size; ++b) {
          Score s{acc[a].pairs + cb[b].pairs, acc[a].fit + cb[b].fit};
          // On ties the later split wins: more units from the earlier (lower-id) children.
          if (!seen[a + b] || !(s < next[a + b])) {
            next[a + b] = s;
            seen[a + b] = true;
            t[a + b] = b;
          }
        }
      acc = std::move(next);
      children.push_back(child);
      take.push_back(std::move(t));
    }
    for (int s = 1; s < static_cast<int>(acc.size()); ++s) {
      acc[s].pairs += static_cast<long>(s) * (s - 1) / 2;
      acc[s].fit -= free_here;
    }
    arena_[id].free_units = free_here;
    arena_[id].best = std::move(acc);
    arena_[id].children = std::move(children);
    arena_[id].take = std::move(take);
    return id;
  }

  void pick(int id, int level, int index, int s, std::vector<int>& out) const {
    if (s == 0) return;
    if (level == 0) {
      out.push_back(index);
      return;
    }
    const DpNode& node = arena_[id];
    const int fan = static_cast<int>(node.children.size());
    for (int c = fan - 1; c >= 0; --c) {
      int b = node.take[c][s];
      pick(node.children[c], level - 1, index * fan + c, b, out);
      s -= b;
    }
  }

  const DpNode& node(int id) const { return arena_[id]; }

 private:
  const std::vector<bool>& free_unit_;
  const std::vector<int>& units_under_;
  const int count_;
  std::vector<DpNode> arena_;
};

}  // namespace

std::vector<int> FatTreeUnitAllocator::least_hop_units(const NodeSet& free, int count) const {
  std::vector<bool> free_unit(unit_count_);
  for (int u = 0; u < unit_count_; ++u) free_unit[u] = unit_state(free, u) == UnitState::kFree;
  UnitDp dp(free_unit, units_under_, count);
  const int levels = static_cast<int>(units_under_.size()) - 1;
  int root = dp.solve(levels, 0);
  assert(static_cast<int>(dp.node(root).best.size()) > count);
  std::vector<int> units;
  dp.pick(root, levels, 0, count, units);
  std::sort(units.begin(), units.end());
  return units;
}

Result<Placement> FatTreeUnitAllocator::allocate(const NodeSet& free,
                                                 const Request& request) const {
  if (auto ok = require_free_count(free, request.nodes); !ok) return ok.error();
  const int n = request.nodes;
  const int m = units_needed(n);
  Placement p{NodeSet(free.size()), std::nullopt, {}};
  auto take_from_unit = [&](int unit, int how_many) {
    const NodeId end = (unit + 1) * unit_size_;
    for (NodeId id = free.next(unit * unit_size_); how_many > 0 && id >= 0 && id < end;
         id = free.next(id + 1), --how_many)
      p.nodes.set(id);
  };
  if (n < unit_size_) {
    int fallback = -1, fallback_free = unit_size_ + 1;
    for (int u = 0; u < unit_count_; ++u) {
      int f = free_in_unit(free, u);
      if (f == n && f < unit_size_) {  // a busy unit that the job fills exactly
        take_from_unit(u, n);
        p.note = "fills busy unit " + std::to_string(u) + " exactly";
        return p;
      }
      if (f > n && f < unit_size_ && f < fallback_free) {
        fallback = u;
        fallback_free = f;
      }
    }
    if (free_unit_count(free) == 0) {
      if (fallback < 0) return does_not_fit_now();
      take_from_unit(fallback, n);
      p.note = "no free unit left: busy unit " + std::to_string(fallback);
      return p;
    }
  }
  const int have = free_unit_count(free);
  if (have < m) return does_not_fit_now();
  std::vector<int> units = least_hop_units(free, m);
  int left = n;
  long hops = 0;
  for (size_t i = 0; i < units.size(); ++i) {
    take_from_unit(units[i], std::min(left, unit_size_));
    left -= std::min(left, unit_size_);
    for (size_t j = i + 1; j < units.size(); ++j) hops += unit_hops(units[i], units[j]);
  }
  p.note = std::to_string(m) + " unit(s) of " + std::to_string(unit_size_) +
           ", pairwise unit hops " + std::to_string(hops);
  return p;
}

void register_fattree_allocators(AllocatorRegistry& registry) {
  registry.add(
      {"fattree-units",
       "whole scheduling units (groups of nodes under one switch) with least pairwise hops (option "
       "unit=N)",
       "fat tree",
       [](const Machine& m, const AllocatorOptions& given) -> Result<std::unique_ptr<Allocator>> {
         ComponentOptions o = given.for_component("fattree-units");
         if (auto ok = o.only({"unit"}); !ok) return ok.error();
         if (!m.fat_tree())
           return fail("allocator 'fattree-units' needs a fat tree or flat machine, not " +
                       m.describe());
         const int leaf = m.fat_tree()->fanouts()[0];
         auto unit = o.whole_number("unit", minimum_unit_size(*m.fat_tree()), 1);
         if (!unit || leaf % *unit != 0)
           return o.bad_value(
               "unit", "expected a whole number dividing the leaf fan-out " + std::to_string(leaf));
         return make_allocator<FatTreeUnitAllocator>(m, static_cast<int>(*unit));
       }});
}

}  // namespace trellis
