// What a job asks of the machine: how many nodes, optionally in what shape, and how they must be
// connected. DESIGN.md's "job request" table is the specification.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_set.h"
#include "core/resource_request.h"
#include "core/result.h"

namespace trellis {

constexpr int kMaxDims = 6;
// The most nodes a shape (or a count) may ask for.
constexpr long kMaxShapeVolume = 1'000'000'000;

// Extents of a box, one per axis (x first). "4x2x2" is {4,2,2}.
using Shape = std::vector<int>;

// "4x2x2" -> {4,2,2}. Each extent a positive integer, 1 to kMaxDims of them.
Result<Shape> parse_shape(std::string_view text);
std::string format_shape(const Shape& shape);  // {4,2,2} -> "4x2x2"
long shape_volume(const Shape& shape);

enum class PlacementMode {
  kTorus,          // one contiguous box, which may cross the wrap-around of wrapping axes
  kMesh,           // one contiguous box that does not cross any wrap-around
  kNonContiguous,  // any nodes; the allocator still seeks locality
};
Result<PlacementMode> parse_placement_mode(std::string_view text);
std::string_view to_string(PlacementMode mode);

struct Request {
  int nodes = 1;       // always set; equals the shape's volume when a shape is given
  Shape shape;         // empty: any nodes (count only)
  bool rotate = true;  // the shape may be permuted across axes
  PlacementMode mode = PlacementMode::kTorus;
  // How many of `nodes` the job did not ask for: a count that no box holds exactly, rounded up to
  // the smallest box that does (sched/request_shaping.h), so that policies count the nodes the
  // job will hold. The job asked for nodes - padding; 0 when the count was not rounded.
  int padding = 0;
  // The nodes the job may be placed on (its partition's), or null for any node of the machine.
  // The allocator sees the whole machine's topology and this mask (alloc/partition_mask.h).
  std::shared_ptr<const NodeSet> allowed;
  // What each node must give the job on a machine whose nodes have an inventory (cores, memory,
  // GPUs, or the whole node: core/resource_request.h); null on a machine of featureless nodes,
  // where every job takes whole nodes. Placed by alloc/node_sharing.h.
  std::shared_ptr<const NodeDemand> demand;

  bool has_shape() const { return !shape.empty(); }
  int asked_nodes() const { return nodes - padding; }
  static Request count(int nodes, PlacementMode mode = PlacementMode::kTorus);
  static Request box(Shape shape, bool rotate = true, PlacementMode mode = PlacementMode::kTorus);
};

// Parses the --request argument: a shape ("4x2x2") or a node count ("64").
Result<Request> parse_request(std::string_view text, bool rotate, PlacementMode mode);

}  // namespace trellis
