// Machine: the interconnect a scheduler places jobs on, built from a spec string.
//
//   torus:16x8               every axis wraps
//   mesh:27x16x24            no axis wraps
//   mesh:27x16x24:wrap=z     Red Storm: only z wraps (axes are x y z a b c)
//   mesh:8x8x8:wrap=x,y      x and y wrap, z does not (wrap= takes a comma list, or none)
//   torus:8x8x8:wrap=xy      a torus whose z does not wrap
//   fattree:4,4,4            fan-outs, leaves first (a 64-node tree)
//   flat:128                 one switch, no topology
//
// A Machine is one of a Torus (mesh/torus) or a FatTree; flat machines are one-level fat trees.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "topology/fat_tree.h"
#include "topology/torus.h"

namespace trellis {

class Machine {
 public:
  enum class Kind { kTorus, kFatTree, kFlat };

  static Result<Machine> parse(std::string_view spec);
  static Machine from_torus(Torus torus);
  static Machine from_fat_tree(FatTree tree);

  Kind kind() const { return kind_; }
  // The spec in canonical form ("torus:8x8x8", "mesh:27x16x24:wrap=z", "fattree:4,4,4").
  const std::string& spec() const { return spec_; }
  int node_count() const;
  // Null when the machine is not of that kind. Flat machines have a (one-level) fat tree.
  const Torus* torus() const { return torus_ ? &*torus_ : nullptr; }
  const FatTree* fat_tree() const { return tree_ ? &*tree_ : nullptr; }

  // Hops between two nodes: L1 (torus-aware) on a mesh/torus, switch chips on a tree, 1 on flat.
  int hop_distance(NodeId a, NodeId b) const;
  std::string describe() const;

 private:
  Kind kind_ = Kind::kFlat;
  std::string spec_;
  std::optional<Torus> torus_;
  std::optional<FatTree> tree_;
};

}  // namespace trellis
