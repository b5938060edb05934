#include "topology/link_load.h"

#include <algorithm>
#include <memory>

namespace trellis {
namespace {

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

// The nodes of a job grouped into lines along one axis: a line is the nodes that agree on a key
// (their coordinates before the axis, or after it), and holds their positions along the axis with
// how many nodes sit at each.
struct AxisLines {
  std::vector<int64_t> key;                 // per line
  std::vector<size_t> first;                // per line, into `at`; one extra entry at the end
  std::vector<std::pair<int, int64_t>> at;  // (position, nodes) in increasing position

  // Groups `packed` (key * extent + position per node) into lines.
  void build(std::vector<int64_t>& packed, int extent) {
    std::sort(packed.begin(), packed.end());
    key.clear(), first.clear(), at.clear();
    for (size_t i = 0; i < packed.size(); ++i) {
      const int64_t line = packed[i] / extent;
      const int position = static_cast<int>(packed[i] % extent);
      if (key.empty() || key.back() != line) key.push_back(line), first.push_back(at.size());
      if (at.size() > first.back() && at.back().first == position)
        ++at.back().second;
      else
        at.push_back({position, 1});
    }
    first.push_back(at.size());
  }
};

// The buffers of torus_loads, kept between calls.
struct TorusScratch {
  std::vector<int> coords;
  AxisLines sources, destinations;
  std::vector<int64_t> packed_sources, packed_destinations;
  std::vector<int64_t> plus, minus;
};

// Dimension-order traffic of all ordered pairs of `nodes`, axis by axis (see the header). No link
// is reached twice: a link belongs to one router and one axis, and a router to one (destination
// line, source line) pair of that axis, so the loads are appended without merging.
void torus_loads(const Torus& torus, const NodeSet& nodes, TorusScratch& scratch,
                 std::vector<LinkLoad>& loads) {
  const int dims = torus.dims();
  const size_t n = static_cast<size_t>(nodes.count());
  std::vector<int>& coords = scratch.coords;  // node i's coordinate on axis k at i * dims + k
  coords.clear();
  nodes.for_each([&](NodeId id) {
    const Coords c = torus.coords(id);
    for (int k = 0; k < dims; ++k) coords.push_back(c[k]);
  });
  AxisLines& sources = scratch.sources;            // lines by the coordinates after k
  AxisLines& destinations = scratch.destinations;  // ... and before k
  std::vector<int64_t>& packed_sources = scratch.packed_sources;
  std::vector<int64_t>& packed_destinations = scratch.packed_destinations;
  packed_sources.resize(n), packed_destinations.resize(n);
  std::vector<int64_t>& plus = scratch.plus;
  std::vector<int64_t>& minus = scratch.minus;
  for (int k = 0; k < dims; ++k) {
    const int extent = torus.extent(k);
    for (size_t i = 0; i < n; ++i) {
      const int* c = &coords[i * static_cast<size_t>(dims)];
      int64_t prefix = 0, suffix = 0;
      for (int j = 0; j < k; ++j) prefix += static_cast<int64_t>(c[j]) * torus.stride(j);
      for (int j = k + 1; j < dims; ++j) suffix += static_cast<int64_t>(c[j]) * torus.stride(j);
      packed_sources[i] = suffix * extent + c[k];
      packed_destinations[i] = prefix * extent + c[k];
    }
    sources.build(packed_sources, extent);
    destinations.build(packed_destinations, extent);
    plus.assign(static_cast<size_t>(extent) + 1, 0);
    minus.assign(plus.size(), 0);
    for (size_t d = 0; d + 1 < destinations.first.size(); ++d) {
      const int64_t prefix = destinations.key[d];
      for (size_t s = 0; s + 1 < sources.first.size(); ++s) {
        const int64_t suffix = sources.key[s];
        bool any = false;
        for (size_t i = sources.first[s]; i < sources.first[s + 1]; ++i) {
          const auto [a, from] = sources.at[i];
          for (size_t j = destinations.first[d]; j < destinations.first[d + 1]; ++j) {
            const auto [b, to] = destinations.at[j];
            if (a == b) continue;
            const int64_t weight = from * to;
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
          plus[x] = minus[x] = 0;  // ready for the next pair of lines
          const int64_t router = prefix + static_cast<int64_t>(x) * torus.stride(k) + suffix;
          if (on_plus) loads.push_back({router * 2 * dims + 2 * k, on_plus});
          if (on_minus) loads.push_back({router * 2 * dims + 2 * k + 1, on_minus});
        }
        plus[extent] = minus[extent] = 0;
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
void tree_loads(const FatTree& tree, const std::vector<int64_t>& offsets, const NodeSet& nodes,
                std::vector<int64_t>& subtrees, std::vector<LinkLoad>& loads) {
  const int64_t n = nodes.count();
  // subtrees: the subtree of each node at this level, sorted
  for (int level = 0; level < tree.levels(); ++level) {
    subtrees.clear();
    nodes.for_each(
        [&](NodeId id) { subtrees.push_back(level == 0 ? id : tree.switch_of(id, level)); });
    std::sort(subtrees.begin(), subtrees.end());
    for (size_t i = 0; i < subtrees.size();) {
      size_t j = i;
      while (j < subtrees.size() && subtrees[j] == subtrees[i]) ++j;
      const int64_t count = static_cast<int64_t>(j - i);
      const int64_t crossing = count * (n - count);
      if (crossing > 0) {
        loads.push_back({offsets[level] + 2 * subtrees[i], crossing});
        loads.push_back({offsets[level] + 2 * subtrees[i] + 1, crossing});
      }
      i = j;
    }
  }
}

}  // namespace

struct LinkLoadCalculator::Scratch {
  TorusScratch torus;
  std::vector<int64_t> tree_offsets;  // tree_level_offsets, on a fat tree
  std::vector<int64_t> subtrees;
};

LinkLoadCalculator::LinkLoadCalculator(const Machine& machine)
    : machine_(machine), scratch_(std::make_unique<Scratch>()) {
  if (!machine.torus() && machine.fat_tree())
    scratch_->tree_offsets = tree_level_offsets(*machine.fat_tree());
}

LinkLoadCalculator::~LinkLoadCalculator() = default;

const std::vector<LinkLoad>& LinkLoadCalculator::loads(const NodeSet& nodes) {
  loads_.clear();
  if (nodes.count() < 2) return loads_;
  if (const Torus* torus = machine_.torus())
    torus_loads(*torus, nodes, scratch_->torus, loads_);
  else if (const FatTree* tree = machine_.fat_tree())
    tree_loads(*tree, scratch_->tree_offsets, nodes, scratch_->subtrees, loads_);
  return loads_;
}

std::vector<LinkLoad> all_to_all_link_loads(const Machine& machine, const NodeSet& nodes) {
  LinkLoadCalculator calculator(machine);
  std::vector<LinkLoad> loads = calculator.loads(nodes);
  std::sort(loads.begin(), loads.end(),
            [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
  return loads;
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
