// Curve: a linear order of a machine's nodes (rank 0..N-1 <-> node id), for allocators that
// treat the machine as a line or a ring (alloc/linear, alloc/buddy, span metrics).
//
//   row-major  rank = node id (x fastest). On a fat tree this is the leaf order.
//   snake      seed 004's routing-derived order ("number line", digest 4.7): x fastest and
//              serpentine, rows joined in y, planes joined alternately, i.e. the reflected
//              mixed-radix order. On 27x16x24 it equals the patent's closed form
//                rank(x,y,z) = z*X*Y + (z odd ? X*Y-1-r : r),  r = y*X + (y even ? x : X-1-x)
//              and consecutive ranks are always mesh neighbours. It works on 1 to 6 axes.
//   hilbert    Hilbert order on 1, 2 or 3 axes. For any extents the grid is embedded in the
//              smallest cube whose side is a power of two, every node gets its Hilbert index
//              in that cube, and nodes are ranked by index (cells outside the machine are
//              skipped). On a power-of-two square or cube consecutive ranks are neighbours;
//              otherwise the skipped cells can make a step longer than one hop, while the
//              order keeps the curve's locality.
//
// A curve "closes into a ring" when its last node is a neighbour of its first (a wrap link on
// a torus): only then may ring bin-packing place a job across the seam.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/node_set.h"
#include "core/result.h"
#include "topology/machine.h"
#include "topology/torus.h"

namespace trellis {

enum class CurveKind { kRowMajor, kSnake, kHilbert };

// "rowmajor", "snake", "hilbert".
Result<CurveKind> parse_curve_kind(std::string_view text);
std::string_view to_string(CurveKind kind);

class Curve {
 public:
  // The curve of `kind` over a mesh/torus. Errors: Hilbert on more than 3 axes.
  static Result<Curve> make(CurveKind kind, const Torus& torus);
  // Node ids in order, a line (used for fat trees and flat machines).
  static Curve identity(int node_count);
  // The curve of `kind` over any machine: on a fat tree or flat machine only row-major (the
  // leaf order of the ids) exists; other kinds are an error naming the machine.
  static Result<Curve> for_machine(CurveKind kind, const Machine& machine);

  CurveKind kind() const { return kind_; }
  int size() const { return static_cast<int>(order_.size()); }
  NodeId node_at(int rank) const { return order_[rank]; }
  int rank_of(NodeId id) const { return rank_[id]; }
  bool closes_into_ring() const { return ring_; }

  // `nodes` (a set of node ids) as a set of ranks, and back. Sizes equal size().
  NodeSet to_ranks(const NodeSet& nodes) const;
  NodeSet to_nodes(const NodeSet& ranks) const;

 private:
  Curve(CurveKind kind, std::vector<NodeId> order, bool ring);

  CurveKind kind_ = CurveKind::kRowMajor;
  std::vector<NodeId> order_;  // rank -> node id
  std::vector<int> rank_;      // node id -> rank
  bool ring_ = false;
};

// The snake rank of the node at `c` (closed form, no table).
int snake_rank(const Torus& torus, const Coords& c);

// The Hilbert index of `c` in a cube of side 2^bits with `dims` (1..3) axes.
uint64_t hilbert_index(const Coords& c, int dims, int bits);

}  // namespace trellis
