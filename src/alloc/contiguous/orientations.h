// Orientations: the box shapes a request may take on a given mesh/torus, in a fixed order.
//
// A shaped request is padded with 1s to the machine's dimension count; with rotation every
// distinct permutation of the padded shape is an orientation. A count-only request accepts every
// ordered factorisation of the count into one factor per axis. Orientations with an extent larger
// than the machine's on that axis are dropped. The list is sorted lexicographically by extents;
// a position in it is the "orientation index" that breaks the last tie of the selection rule
// (alloc/contiguous/fit_rule.h). An empty list means the request can never be placed.
#pragma once

#include <vector>

#include "core/request.h"
#include "topology/torus.h"

namespace trellis {

std::vector<Shape> orientations_for(const Torus& machine, const Request& request);

}  // namespace trellis
