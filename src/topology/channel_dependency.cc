#include "topology/channel_dependency.h"

#include <array>
#include <cstdint>
#include <deque>

namespace trellis {

namespace {

constexpr int kNoDirection = kDirections;  // "injected here", no last hop

int opposite(int dir) {
  return dir ^ 1;
}

class Grid {
 public:
  explicit Grid(const Torus& t) : torus_(t) {
    for (int a = 0; a < t.dims(); ++a) {
      ext_[a] = t.extent(a);
      wrap_[a] = t.wraps(a);
    }
  }
  int nodes() const { return torus_.node_count(); }
  // The router one hop from `node` in `dir`, or -1 at a mesh face (or along an axis of one);
  // `crosses_wrap` tells whether the hop uses a wrap-around link.
  NodeId step(NodeId node, int dir, bool& crosses_wrap) const {
    const int axis = dir / 2, delta = dir % 2 == 0 ? 1 : -1;
    crosses_wrap = false;
    if (ext_[axis] < 2) return -1;
    Coords c = torus_.coords(node);
    int v = c[axis] + delta;
    if (v < 0 || v >= ext_[axis]) {
      if (!wrap_[axis]) return -1;
      v = (v + ext_[axis]) % ext_[axis];
      crosses_wrap = true;
    }
    c[axis] = v;
    return torus_.id(c);
  }
  bool on_last_plane(NodeId node, int axis) const {
    return torus_.coords(node)[axis] == ext_[axis] - 1;
  }
  bool wraps(int axis) const { return wrap_[axis]; }

 private:
  const Torus& torus_;
  std::array<int, 3> ext_{1, 1, 1};
  std::array<bool, 3> wrap_{false, false, false};
};

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
  const Grid grid(torus);
  const int phases = static_cast<int>(rules.phases.size());
  const int n = grid.nodes();
  // Dependencies of a channel: the next channel leaves the router the first one enters, in one
  // of 6 directions on one of 2 channels, so a 12-bit mask per channel holds them all.
  std::vector<uint16_t> next_mask(static_cast<size_t>(n) * kDirections * 2, 0);
  std::vector<bool> used(next_mask.size(), false);
  auto state_index = [&](NodeId node, int phase, int vc, int last) {
    return ((static_cast<size_t>(node) * phases + phase) * 2 + vc) * (kDirections + 1) + last;
  };
  std::vector<bool> seen(static_cast<size_t>(n) * phases * 2 * (kDirections + 1), false);
  struct State {
    NodeId node;
    int phase, vc, last;
  };
  std::deque<State> queue;
  for (NodeId node = 0; node < n; ++node) {
    queue.push_back({node, 0, 0, kNoDirection});
    seen[state_index(node, 0, 0, kNoDirection)] = true;
  }
  DependencyCheck result;
  while (!queue.empty()) {
    const State s = queue.front();
    queue.pop_front();
    ++result.states;
    for (int d = 0; d < kDirections; ++d) {
      if (s.last != kNoDirection && d == opposite(s.last)) continue;  // no U-turns
      int phase = -1;
      for (int p = s.phase; p < phases; ++p) {
        if (!rules.phases[p][d]) continue;
        phase = p;
        if (rules.phase_choice == RoutingRules::PhaseChoice::kEarliest) break;
      }
      if (phase < 0) continue;
      bool crosses_wrap = false;
      const NodeId next = grid.step(s.node, d, crosses_wrap);
      if (next < 0) continue;
      const int axis = d / 2;
      const bool continues_in_axis = s.last != kNoDirection && s.last / 2 == axis;
      bool to_channel_one = false;
      if (grid.wraps(axis)) {
        switch (rules.dateline) {
          case RoutingRules::Dateline::kThrough:
            to_channel_one = continues_in_axis && grid.on_last_plane(s.node, axis);
            break;
          case RoutingRules::Dateline::kBoundary:
            to_channel_one = grid.on_last_plane(s.node, axis);
            break;
          case RoutingRules::Dateline::kLink:
            to_channel_one = crosses_wrap;
            break;
          case RoutingRules::Dateline::kNone:
            break;
        }
      }
      if (to_channel_one && s.vc == 1) continue;  // channel 1 may not pass the dateline again
      std::array<int, 2> out_channels = {to_channel_one ? 1 : s.vc, -1};
      if (!rules.keep_channel_on_mesh_axes && !grid.wraps(axis)) out_channels = {0, 1};
      for (int vc : out_channels) {
        if (vc < 0) continue;
        used[channel_index(s.node, d, vc)] = true;
        if (s.last != kNoDirection) {
          bool unused = false;
          const NodeId prev = grid.step(s.node, opposite(s.last), unused);
          next_mask[channel_index(prev, s.last, s.vc)] |= uint16_t{1} << (d * 2 + vc);
        }
        const size_t si = state_index(next, phase, vc, d);
        if (!seen[si]) {
          seen[si] = true;
          queue.push_back({next, phase, vc, d});
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
    bool unused = false;
    const NodeId into = grid.step(node, dir, unused);
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
