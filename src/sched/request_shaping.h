// Request shaping: turns a node count into a box so that a contiguous allocator can place jobs of
// a trace that only logs counts, the way Blue Gene and Fujitsu sites ask users for a shape.
//
// Padding: a count that no box holds exactly (17 nodes on a 16x16 torus) is rounded up to the
// smallest volume that some box of the machine holds, as Blue Gene gives such a job a whole block.
// The nodes added are internal fragmentation: held, paid for, unused.
//
// The box for n nodes is the most cube-like one: among the factorizations of n into one extent per
// machine axis, each within the axis's extent, the one with the smallest largest extent (then the
// smallest sum of extents, then the first in lexicographic order). When no box of exactly n nodes
// fits the machine (n prime and larger than every axis, say), the request stays a count.
#pragma once

#include <optional>

#include "core/request.h"
#include "topology/torus.h"

namespace trellis {

std::optional<Shape> cube_like_shape(const Torus& machine, int nodes);

// `request` with its shape set by cube_like_shape when it has none and a box exists.
Request shape_request(const Torus& machine, Request request);

// Whether some box of exactly `volume` nodes fits the machine (extents within the machine's).
bool box_of_volume_fits(const Torus& machine, long volume);

// The smallest volume >= `nodes` that a box of the machine holds; nullopt when `nodes` is not in
// 1..node_count (the whole machine is a box, so every count up to it has an answer).
std::optional<int> smallest_box_volume(const Torus& machine, int nodes);

// Rounds the count of a count-only request up to smallest_box_volume, recording the extra nodes in
// `padding`. Shaped requests, noncontiguous ones and counts the machine cannot hold are returned
// unchanged.
Request pad_to_box(const Torus& machine, Request request);

}  // namespace trellis
