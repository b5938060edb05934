#include "topology/link_load.h"

#include <algorithm>
#include <unordered_map>

namespace trellis {
namespace {

using Loads = std::unordered_map<int64_t, int64_t>;

// Adds `weight` to positions first, first+1, ..., first+count-1 (mod extent) of a difference
// array of extent + 1 entries.
void add_forward(std::vector<int64_t>& diff, int extent, int first, int count, int64_t weight) {
  int end = first + count;  // exclusive
  if (end <= extent) {
    diff[first] += weight, diff[end] -= weight;
  } else {
    diff[first] += weight, diff[extent] -= weight;
    diff[0] += weight, diff[end - extent] -= weight;
  }
}

// Adds `weight` to positions first, first-1, ..., first-count+1 (mod extent).
void add_backward(std::vector<int64_t>& diff, int extent, int first, int count, int64_t weight) {
  int last = first - count + 1;  // inclusive, may be negative
  if (last >= 0) {
    diff[last] += weight, diff[first + 1] -= weight;
  } else {
    diff[0] += weight, diff[first + 1] -= weight;
    diff[last + extent] += weight, diff[extent] -= weight;
  }
}

// Dimension-order traffic of all ordered pairs of `nodes`, axis by axis (see the header).
void torus_loads(const Torus& torus, const NodeSet& nodes, Loads& loads) {
  const int dims = torus.dims();
  std::vector<Coords> at;
  at.reserve(static_cast<size_t>(nodes.count()));
  nodes.for_each([&](NodeId id) { at.push_back(torus.coords(id)); });
  for (int k = 0; k < dims; ++k) {
    const int extent = torus.extent(k);
    // sources[suffix][x]: nodes whose coordinates after k give `suffix` (their id part) and whose
    // coordinate k is x; destinations[prefix][x] likewise with the coordinates before k.
    std::unordered_map<int64_t, std::vector<int64_t>> sources, destinations;
    for (const Coords& c : at) {
      int64_t prefix = 0, suffix = 0;
      for (int i = 0; i < k; ++i) prefix += static_cast<int64_t>(c[i]) * torus.stride(i);
      for (int i = k + 1; i < dims; ++i) suffix += static_cast<int64_t>(c[i]) * torus.stride(i);
      auto& s = sources[suffix];
      if (s.empty()) s.assign(static_cast<size_t>(extent), 0);
      ++s[c[k]];
      auto& d = destinations[prefix];
      if (d.empty()) d.assign(static_cast<size_t>(extent), 0);
      ++d[c[k]];
    }
    std::vector<int64_t> plus(static_cast<size_t>(extent) + 1), minus(plus.size());
    for (const auto& [prefix, to] : destinations) {
      for (const auto& [suffix, from] : sources) {
        std::fill(plus.begin(), plus.end(), 0);
        std::fill(minus.begin(), minus.end(), 0);
        bool any = false;
        for (int a = 0; a < extent; ++a) {
          if (from[a] == 0) continue;
          for (int b = 0; b < extent; ++b) {
            if (to[b] == 0 || a == b) continue;
            const int64_t weight = from[a] * to[b];
            any = true;
            if (torus.wraps(k)) {
              int forward = (b - a + extent) % extent;
              if (forward > extent - forward)
                add_backward(minus, extent, a, extent - forward, weight);
              else
                add_forward(plus, extent, a, forward, weight);
            } else if (b > a) {
              add_forward(plus, extent, a, b - a, weight);
            } else {
              add_backward(minus, extent, a, a - b, weight);
            }
          }
        }
        if (!any) continue;
        int64_t on_plus = 0, on_minus = 0;
        for (int x = 0; x < extent; ++x) {
          on_plus += plus[x], on_minus += minus[x];
          const int64_t router = prefix + static_cast<int64_t>(x) * torus.stride(k) + suffix;
          if (on_plus) loads[router * 2 * dims + 2 * k] += on_plus;
          if (on_minus) loads[router * 2 * dims + 2 * k + 1] += on_minus;
        }
      }
    }
  }
}

// First link id of each level of a fat tree (level 0: a node's link to its leaf switch).
std::vector<int64_t> tree_level_offsets(const FatTree& tree) {
  std::vector<int64_t> offsets{0};
  for (int level = 0; level < tree.levels(); ++level) {
    const int64_t subtrees = level == 0 ? tree.node_count() : tree.switches_at(level);
    offsets.push_back(offsets.back() + 2 * subtrees);
  }
  return offsets;
}

// Up and down: a subtree holding c of the n nodes sends c * (n - c) messages up and receives as
// many down (every pair with one end inside and one outside crosses its link both ways).
void tree_loads(const FatTree& tree, const NodeSet& nodes, Loads& loads) {
  const int64_t n = nodes.count();
  const std::vector<int64_t> offsets = tree_level_offsets(tree);
  for (int level = 0; level < tree.levels(); ++level) {
    std::unordered_map<int64_t, int64_t> inside;
    nodes.for_each([&](NodeId id) { ++inside[level == 0 ? id : tree.switch_of(id, level)]; });
    for (auto [subtree, count] : inside) {
      const int64_t crossing = count * (n - count);
      if (crossing == 0) continue;
      loads[offsets[level] + 2 * subtree] += crossing;
      loads[offsets[level] + 2 * subtree + 1] += crossing;
    }
  }
}

}  // namespace

std::vector<LinkLoad> all_to_all_link_loads(const Machine& machine, const NodeSet& nodes) {
  Loads loads;
  if (const Torus* torus = machine.torus())
    torus_loads(*torus, nodes, loads);
  else if (const FatTree* tree = machine.fat_tree())
    tree_loads(*tree, nodes, loads);
  std::vector<LinkLoad> out;
  out.reserve(loads.size());
  for (auto [link, messages] : loads) out.push_back({link, messages});
  std::sort(out.begin(), out.end(),
            [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
  return out;
}

int64_t link_id_bound(const Machine& machine) {
  if (const Torus* torus = machine.torus())
    return static_cast<int64_t>(torus->node_count()) * 2 * torus->dims();
  if (const FatTree* tree = machine.fat_tree()) return tree_level_offsets(*tree).back();
  return 0;
}

namespace {

// The capacity of `link` on `tree`, given tree_level_offsets(tree).
int64_t tree_link_capacity(const FatTree& tree, const std::vector<int64_t>& offsets, int64_t link) {
  int level = 0;
  while (level + 1 < tree.levels() && link >= offsets[level + 1]) ++level;
  return level == 0 ? 1 : tree.nodes_under(level);
}

}  // namespace

int64_t link_capacity(const Machine& machine, int64_t link) {
  const FatTree* tree = machine.torus() ? nullptr : machine.fat_tree();
  if (!tree) return 1;
  return tree_link_capacity(*tree, tree_level_offsets(*tree), link);
}

double max_link_load(const Machine& machine, const std::vector<LinkLoad>& loads) {
  const FatTree* tree = machine.torus() ? nullptr : machine.fat_tree();
  const std::vector<int64_t> offsets = tree ? tree_level_offsets(*tree) : std::vector<int64_t>{};
  double most = 0;
  for (const LinkLoad& l : loads) {
    const int64_t capacity = tree ? tree_link_capacity(*tree, offsets, l.link) : 1;
    most = std::max(most, static_cast<double>(l.messages) / static_cast<double>(capacity));
  }
  return most;
}

}  // namespace trellis
