#include "topology/curve.h"

#include <algorithm>
#include <numeric>

namespace trellis {

Result<CurveKind> parse_curve_kind(std::string_view text) {
  if (text == "rowmajor") return CurveKind::kRowMajor;
  if (text == "snake") return CurveKind::kSnake;
  if (text == "hilbert") return CurveKind::kHilbert;
  return fail("unknown curve '" + std::string(text) + "' (expected rowmajor, snake or hilbert)");
}

std::string_view to_string(CurveKind kind) {
  switch (kind) {
    case CurveKind::kRowMajor:
      return "rowmajor";
    case CurveKind::kSnake:
      return "snake";
    case CurveKind::kHilbert:
      return "hilbert";
  }
  return "?";
}

int snake_rank(const Torus& torus, const Coords& c) {
  // Reflected mixed radix: walking from the slowest axis down, an odd prefix reverses the
  // direction of the next axis, which is what joins rows and planes end to end.
  int rank = 0;
  for (int a = torus.dims() - 1; a >= 0; --a) {
    int digit = (rank % 2 == 1) ? torus.extent(a) - 1 - c[a] : c[a];
    rank = rank * torus.extent(a) + digit;
  }
  return rank;
}

uint64_t hilbert_index(const Coords& c, int dims, int bits) {
  // Skilling's transform ("Programming the Hilbert curve", 2004): coordinates -> the
  // "transposed" Hilbert index, whose bits interleaved give the index.
  uint32_t t[3] = {0, 0, 0};
  for (int i = 0; i < dims; ++i) t[i] = static_cast<uint32_t>(c[i]);
  const uint32_t top = uint32_t{1} << (bits - 1);
  for (uint32_t q = top; q > 1; q >>= 1) {
    uint32_t low = q - 1;
    for (int i = 0; i < dims; ++i) {
      if (t[i] & q) {
        t[0] ^= low;
      } else {
        uint32_t swap = (t[0] ^ t[i]) & low;
        t[0] ^= swap;
        t[i] ^= swap;
      }
    }
  }
  for (int i = 1; i < dims; ++i) t[i] ^= t[i - 1];
  uint32_t fix = 0;
  for (uint32_t q = top; q > 1; q >>= 1)
    if (t[dims - 1] & q) fix ^= q - 1;
  for (int i = 0; i < dims; ++i) t[i] ^= fix;
  uint64_t index = 0;
  for (int b = bits - 1; b >= 0; --b)
    for (int i = 0; i < dims; ++i) index = (index << 1) | ((t[i] >> b) & 1);
  return index;
}

Curve::Curve(CurveKind kind, std::vector<NodeId> order, bool ring)
    : kind_(kind), order_(std::move(order)), rank_(order_.size()), ring_(ring) {
  for (int r = 0; r < size(); ++r) rank_[order_[r]] = r;
}

Curve Curve::identity(int node_count) {
  std::vector<NodeId> order(node_count);
  std::iota(order.begin(), order.end(), 0);
  return Curve(CurveKind::kRowMajor, std::move(order), false);
}

Result<Curve> Curve::for_machine(CurveKind kind, const Machine& machine) {
  if (machine.torus()) return make(kind, *machine.torus());
  if (kind != CurveKind::kRowMajor)
    return fail("the " + std::string(to_string(kind)) + " curve needs a mesh or torus, not " +
                machine.describe());
  return identity(machine.node_count());
}

Result<Curve> Curve::make(CurveKind kind, const Torus& torus) {
  const int n = torus.node_count();
  std::vector<NodeId> order(n);
  switch (kind) {
    case CurveKind::kRowMajor:
      std::iota(order.begin(), order.end(), 0);
      break;
    case CurveKind::kSnake:
      for (NodeId id = 0; id < n; ++id) order[snake_rank(torus, torus.coords(id))] = id;
      break;
    case CurveKind::kHilbert: {
      if (torus.dims() == 1) {  // a line is its own Hilbert curve
        std::iota(order.begin(), order.end(), 0);
        break;
      }
      if (torus.dims() > 3)
        return fail("the Hilbert curve is defined here for 1 to 3 axes, not " +
                    std::to_string(torus.dims()));
      int side = *std::max_element(torus.extents().begin(), torus.extents().end());
      int bits = 1;
      while ((1 << bits) < side) ++bits;
      std::vector<std::pair<uint64_t, NodeId>> keyed(n);
      for (NodeId id = 0; id < n; ++id)
        keyed[id] = {hilbert_index(torus.coords(id), torus.dims(), bits), id};
      std::sort(keyed.begin(), keyed.end());
      for (int r = 0; r < n; ++r) order[r] = keyed[r].second;
      break;
    }
  }
  bool ring = n >= 3 && torus.hop_distance(order.front(), order.back()) == 1;
  return Curve(kind, std::move(order), ring);
}

NodeSet Curve::to_ranks(const NodeSet& nodes) const {
  NodeSet ranks(size());
  nodes.for_each([&](NodeId id) { ranks.set(rank_[id]); });
  return ranks;
}

NodeSet Curve::to_nodes(const NodeSet& ranks) const {
  NodeSet nodes(size());
  ranks.for_each([&](NodeId r) { nodes.set(order_[r]); });
  return nodes;
}

}  // namespace trellis
