// Box: an axis-aligned block of nodes on a Torus, given by its anchor (minimum corner) and
// extents. On wrapping axes a box may run past the last coordinate and continue at 0.
#pragma once

#include <string>

#include "core/node_set.h"
#include "core/request.h"
#include "topology/torus.h"

namespace trellis {

struct Box {
  Coords anchor{};
  Shape extents;  // one per machine axis

  long volume() const { return shape_volume(extents); }
  // The nodes the box covers, coordinates taken modulo the machine's extents.
  NodeSet nodes(const Torus& machine) const;
  // True when the box runs past the end of some axis (possible only where that axis wraps).
  bool crosses_wrap(const Torus& machine) const;
  // "4x2x2 at (3,0,5)"
  std::string describe(const Torus& machine) const;
  friend bool operator==(const Box&, const Box&) = default;
};

}  // namespace trellis
