#include "alloc/contiguous/orientations.h"

#include <algorithm>

namespace trellis {

namespace {

bool fits(const Torus& machine, const Shape& shape) {
  for (int a = 0; a < machine.dims(); ++a)
    if (shape[a] > machine.extent(a)) return false;
  return true;
}

// Every ordered way to write `rest` as a product of the remaining factors, each at most the
// machine's extent on its axis (so that hopeless branches are cut early).
void factorise(const Torus& machine, long rest, int axis, Shape& current, std::vector<Shape>& out) {
  if (axis == machine.dims() - 1) {
    if (rest <= machine.extent(axis)) {
      current[axis] = static_cast<int>(rest);
      out.push_back(current);
    }
    return;
  }
  for (long f = 1; f <= std::min<long>(rest, machine.extent(axis)); ++f) {
    if (rest % f != 0) continue;
    current[axis] = static_cast<int>(f);
    factorise(machine, rest / f, axis + 1, current, out);
  }
}

}  // namespace

std::vector<Shape> orientations_for(const Torus& machine, const Request& request) {
  const int dims = machine.dims();
  std::vector<Shape> out;
  if (request.nodes < 1) return out;
  if (!request.has_shape()) {
    Shape current(dims, 1);
    factorise(machine, request.nodes, 0, current, out);
    return out;  // generated in lexicographic order already
  }
  // A shape with more axes than the machine fits only if the extra extents are 1: trailing ones
  // without rotation (4x2x1 on a 2-D machine), any ones with it (1x4x2 is then 4x2).
  Shape given = request.shape;
  for (size_t a = given.size(); static_cast<int>(given.size()) > dims && a-- > 0;)
    if (given[a] == 1 && (request.rotate || a == given.size() - 1)) given.erase(given.begin() + a);
  if (static_cast<int>(given.size()) > dims) return out;
  Shape padded(dims, 1);
  for (size_t a = 0; a < given.size(); ++a) padded[a] = given[a];
  if (!request.rotate) {
    if (fits(machine, padded)) out.push_back(padded);
    return out;
  }
  std::sort(padded.begin(), padded.end());
  do {
    if (fits(machine, padded)) out.push_back(padded);
  } while (std::next_permutation(padded.begin(), padded.end()));
  return out;  // next_permutation visits distinct permutations in lexicographic order
}

}  // namespace trellis
