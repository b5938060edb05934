// Request shaping: turns a node count into a box so that a contiguous allocator can place jobs of
// a trace that only logs counts, the way Blue Gene and Fujitsu sites ask users for a shape.
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

}  // namespace trellis
