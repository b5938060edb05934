#include "topology/box.h"

namespace trellis {

NodeSet Box::nodes(const Torus& machine) const {
  NodeSet out(machine.node_count());
  const int dims = machine.dims();
  Coords offset{};  // odometer over the box, x fastest
  while (true) {
    Coords c{};
    for (int a = 0; a < dims; ++a) c[a] = (anchor[a] + offset[a]) % machine.extent(a);
    out.set(machine.id(c));
    int a = 0;
    while (a < dims && ++offset[a] == extents[a]) offset[a++] = 0;
    if (a == dims) break;
  }
  return out;
}

bool Box::crosses_wrap(const Torus& machine) const {
  for (int a = 0; a < machine.dims(); ++a)
    if (anchor[a] + extents[a] > machine.extent(a)) return true;
  return false;
}

std::string Box::describe(const Torus& machine) const {
  std::string out = format_shape(extents) + " at (";
  for (int a = 0; a < machine.dims(); ++a) {
    if (a) out += ',';
    out += std::to_string(anchor[a]);
  }
  return out + ")";
}

}  // namespace trellis
