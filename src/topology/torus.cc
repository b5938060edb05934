#include "topology/torus.h"

#include <cstdlib>

namespace trellis {

char axis_name(int axis) {
  return "xyzabc"[axis];
}

Result<Torus> Torus::make(std::vector<int> extents, std::vector<bool> wraps) {
  if (extents.empty() || extents.size() > kMaxDims)
    return fail("a mesh or torus needs 1 to " + std::to_string(kMaxDims) + " dimensions, got " +
                std::to_string(extents.size()));
  if (wraps.size() != extents.size()) return fail("one wrap flag is needed per dimension");
  long total = 1;
  for (size_t a = 0; a < extents.size(); ++a) {
    if (extents[a] < 1)
      return fail(std::string("extent of axis ") + axis_name(a) + " must be at least 1");
    total *= extents[a];
    if (total > (1 << 24))
      return fail("machine too large: more than " + std::to_string(1 << 24) + " nodes");
  }
  Torus t;
  t.extents_ = std::move(extents);
  t.wraps_ = std::move(wraps);
  t.node_count_ = static_cast<int>(total);
  int stride = 1;
  for (int e : t.extents_) {
    t.strides_.push_back(stride);
    stride *= e;
  }
  return t;
}

bool Torus::any_wrap() const {
  for (bool w : wraps_)
    if (w) return true;
  return false;
}

Coords Torus::coords(NodeId id) const {
  Coords c{};
  for (int a = 0; a < dims(); ++a) {
    c[a] = id % extents_[a];
    id /= extents_[a];
  }
  return c;
}

NodeId Torus::id(const Coords& c) const {
  NodeId id = 0;
  for (int a = dims() - 1; a >= 0; --a) id = id * extents_[a] + c[a];
  return id;
}

int Torus::axis_distance(int axis, int a, int b) const {
  int d = std::abs(a - b);
  if (wraps_[axis]) d = std::min(d, extents_[axis] - d);
  return d;
}

int Torus::hop_distance(NodeId a, NodeId b) const {
  Coords ca = coords(a), cb = coords(b);
  int hops = 0;
  for (int ax = 0; ax < dims(); ++ax) hops += axis_distance(ax, ca[ax], cb[ax]);
  return hops;
}

std::string Torus::describe() const {
  std::string out = format_shape(extents_);
  bool all = true, none = true;
  for (bool w : wraps_) (w ? none : all) = false;
  if (all) return out + " torus";
  if (none) return out + " mesh";
  out += " mesh, wrap ";
  for (int a = 0; a < dims(); ++a)
    if (wraps_[a]) out += axis_name(a);
  return out;
}

}  // namespace trellis
