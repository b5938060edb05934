// Torus: an N-dimensional mesh or torus (1 to 6 axes), with wrap-around chosen per axis.
//
// Node ids are row-major with x (axis 0) fastest: id = x + X*(y + Y*(z + ...)). This is the order
// the contiguous allocator's word-parallel rows rely on, so keep it.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/node_set.h"
#include "core/request.h"
#include "core/result.h"

namespace trellis {

using Coords = std::array<int, kMaxDims>;

// Axis names as on Tofu-style machines: x y z a b c.
char axis_name(int axis);

class Torus {
 public:
  // extents: 1..6 positive sizes; wraps: one flag per axis. Errors name the bad value.
  static Result<Torus> make(std::vector<int> extents, std::vector<bool> wraps);

  int dims() const { return static_cast<int>(extents_.size()); }
  int extent(int axis) const { return extents_[axis]; }
  bool wraps(int axis) const { return wraps_[axis]; }
  const std::vector<int>& extents() const { return extents_; }
  const std::vector<bool>& wrap_flags() const { return wraps_; }
  bool any_wrap() const;
  int node_count() const { return node_count_; }
  // Distance in ids between neighbours along `axis`: 1, X, X*Y, ...
  int stride(int axis) const { return strides_[axis]; }

  Coords coords(NodeId id) const;
  NodeId id(const Coords& c) const;
  // L1 distance, taking the short way round on wrapping axes.
  int hop_distance(NodeId a, NodeId b) const;
  int axis_distance(int axis, int a, int b) const;

  // "8x8x8 torus" / "27x16x24 mesh, wrap z"
  std::string describe() const;

 private:
  std::vector<int> extents_;
  std::vector<bool> wraps_;
  std::vector<int> strides_;
  int node_count_ = 0;
};

}  // namespace trellis
