#include "topology/channel_dependency.h"

#include <array>
#include <cstdint>
#include <deque>

namespace trellis {

namespace {

int channel_index(NodeId node, int dir, int vc) {
  return (node * kDirections + dir) * 2 + vc;
}

}  // namespace

std::string format_channel(const Torus& torus, const Channel& channel) {
  Coords c = torus.coords(channel.node);
  std::string out = "(";
  for (int a = 0; a < torus.dims(); ++a) {
    if (a > 0) out += ',';
    out += std::to_string(c[a]);
  }
  return out + ") " + direction_name(channel.direction) + " ch" + std::to_string(channel.vc);
}

Result<DependencyCheck> check_channel_dependencies(const Torus& torus, const RoutingRules& rules) {
  if (torus.dims() > 3)
    return fail("the routing check covers meshes and tori of 1 to 3 axes, not " +
                std::to_string(torus.dims()));
  const int phases = static_cast<int>(rules.phases.size());
  const int n = torus.node_count();
  // Dependencies of a channel: the next channel leaves the router the first one enters, in one
  // of 6 directions on one of 2 channels, so a 12-bit mask per channel holds them all.
  std::vector<uint16_t> next_mask(static_cast<size_t>(n) * kDirections * 2, 0);
  std::vector<bool> used(next_mask.size(), false);
  auto state_index = [&](const WalkState& s) {
    return ((static_cast<size_t>(s.node) * phases + s.phase) * 2 + s.vc) * (kDirections + 1) +
           s.last;
  };
  std::vector<bool> seen(static_cast<size_t>(n) * phases * 2 * (kDirections + 1), false);
  std::deque<WalkState> queue;
  for (NodeId node = 0; node < n; ++node) {
    WalkState start{node, 0, 0, kInjected};
    queue.push_back(start);
    seen[state_index(start)] = true;
  }
  DependencyCheck result;
  std::array<WalkState, 2> next;
  while (!queue.empty()) {
    const WalkState s = queue.front();
    queue.pop_front();
    ++result.states;
    for (int d = 0; d < kDirections; ++d) {
      const int count = successors(torus, rules, s, d, next);
      for (int i = 0; i < count; ++i) {
        used[channel_index(s.node, d, next[i].vc)] = true;
        if (s.last != kInjected) {
          const NodeId prev = neighbour(torus, s.node, opposite(s.last));
          next_mask[channel_index(prev, s.last, s.vc)] |= uint16_t{1} << (d * 2 + next[i].vc);
        }
        const size_t si = state_index(next[i]);
        if (!seen[si]) {
          seen[si] = true;
          queue.push_back(next[i]);
        }
      }
    }
  }
  for (size_t c = 0; c < used.size(); ++c) {
    result.channels += used[c];
    result.dependencies += std::popcount(next_mask[c]);
  }
  // Cycle search: iterative depth-first search with white/grey/black colours.
  auto target = [&](int channel, int bit) {
    const NodeId node = channel / (kDirections * 2);
    const int dir = (channel / 2) % kDirections;
    const NodeId into = neighbour(torus, node, dir);
    return channel_index(into, bit / 2, bit % 2);
  };
  std::vector<uint8_t> colour(next_mask.size(), 0);
  struct Frame {
    int channel;
    int bit;
  };
  std::vector<Frame> stack;
  for (int root = 0; root < static_cast<int>(next_mask.size()); ++root) {
    if (colour[root] != 0 || next_mask[root] == 0) continue;
    stack.push_back({root, 0});
    colour[root] = 1;
    while (!stack.empty()) {
      Frame& f = stack.back();
      while (f.bit < 12 && !(next_mask[f.channel] >> f.bit & 1)) ++f.bit;
      if (f.bit == 12) {
        colour[f.channel] = 2;
        stack.pop_back();
        continue;
      }
      const int to = target(f.channel, f.bit++);
      if (colour[to] == 1) {  // back edge: `to` lies on a cycle
        result.acyclic = false;
        // Report the shortest cycle through `to` (breadth-first), which is easier to read than
        // the depth-first stack.
        std::vector<int> parent(next_mask.size(), -1);
        std::deque<int> frontier = {to};
        int last = -1;
        while (!frontier.empty() && last < 0) {
          const int c = frontier.front();
          frontier.pop_front();
          for (int bit = 0; bit < 12 && last < 0; ++bit) {
            if (!(next_mask[c] >> bit & 1)) continue;
            const int d = target(c, bit);
            if (d == to) {
              last = c;
            } else if (parent[d] < 0) {
              parent[d] = c;
              frontier.push_back(d);
            }
          }
        }
        std::vector<int> path;
        for (int c = last; c != to; c = parent[c]) path.push_back(c);
        path.push_back(to);
        for (auto it = path.rbegin(); it != path.rend(); ++it)
          result.cycle.push_back({*it / (kDirections * 2), (*it / 2) % kDirections, *it % 2});
        return result;
      }
      if (colour[to] == 0) {
        colour[to] = 1;
        stack.push_back({to, 0});
      }
    }
  }
  return result;
}

}  // namespace trellis
