#include "sched/request_shaping.h"

#include <algorithm>
#include <numeric>

namespace trellis {

namespace {

// Depth-first over the divisors of `left`, one extent per axis from `axis` on.
void search(const Torus& machine, int axis, int left, Shape& current, std::optional<Shape>& best) {
  if (axis == machine.dims()) {
    if (left != 1) return;
    auto key = [](const Shape& s) {
      return std::pair{*std::max_element(s.begin(), s.end()),
                       std::accumulate(s.begin(), s.end(), 0)};
    };
    if (!best || key(current) < key(*best)) best = current;
    return;
  }
  for (int e = 1; e <= std::min(left, machine.extent(axis)); ++e) {
    if (left % e != 0) continue;
    current[axis] = e;
    search(machine, axis + 1, left / e, current, best);
  }
}

// Whether `rest` is a product of one factor per axis from `axis` on, each within its extent.
bool factorises(const Torus& machine, int axis, long rest) {
  if (axis == machine.dims() - 1) return rest <= machine.extent(axis);
  for (long f = 1; f <= std::min<long>(rest, machine.extent(axis)); ++f)
    if (rest % f == 0 && factorises(machine, axis + 1, rest / f)) return true;
  return false;
}

}  // namespace

bool box_of_volume_fits(const Torus& machine, long volume) {
  return volume >= 1 && volume <= machine.node_count() && factorises(machine, 0, volume);
}

std::optional<int> smallest_box_volume(const Torus& machine, int nodes) {
  if (nodes < 1 || nodes > machine.node_count()) return std::nullopt;
  int volume = nodes;
  while (!box_of_volume_fits(machine, volume)) ++volume;  // ends: the whole machine is a box
  return volume;
}

Request pad_to_box(const Torus& machine, Request request) {
  if (request.has_shape() || request.mode == PlacementMode::kNonContiguous) return request;
  if (auto volume = smallest_box_volume(machine, request.nodes)) {
    request.padding += *volume - request.nodes;
    request.nodes = *volume;
  }
  return request;
}

std::optional<Shape> cube_like_shape(const Torus& machine, int nodes) {
  if (nodes < 1 || nodes > machine.node_count()) return std::nullopt;
  Shape current(machine.dims(), 1);
  std::optional<Shape> best;
  search(machine, 0, nodes, current, best);
  return best;
}

Request shape_request(const Torus& machine, Request request) {
  if (request.has_shape()) return request;
  if (auto shape = cube_like_shape(machine, request.nodes)) request.shape = *shape;
  return request;
}

}  // namespace trellis
