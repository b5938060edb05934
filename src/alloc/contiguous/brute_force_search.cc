// The brute-force search: the test oracle. It applies fit_rule.h literally, one node at a time,
// with no cleverness beyond "a box that is not free stays not free when it grows".
#include <algorithm>

#include "alloc/contiguous/box_search.h"

namespace trellis {

namespace {

class BruteForceSearch : public BoxSearch {
 public:
  explicit BruteForceSearch(const Torus& machine) : machine_(machine) {}

  std::string_view name() const override { return "brute"; }

  std::optional<BoxChoice> choose(const NodeSet& free, const std::vector<Shape>& orientations,
                                  PlacementMode mode) const override {
    std::optional<BoxChoice> best;
    const int n0 = machine_.extent(0);
    for (int index = 0; index < static_cast<int>(orientations.size()); ++index) {
      const Shape& s = orientations[index];
      for (NodeId id = 0; id < machine_.node_count(); ++id) {
        Coords a = machine_.coords(id);
        if (!anchor_valid(a, s, mode)) continue;
        if (!box_free(free, a, s)) continue;
        std::vector<bool> band(n0);
        for (int c = 0; c < n0; ++c) band[c] = cross_section_free(free, c, a, s);
        EnclosingRun run = enclosing_run(band, a[0], s[0], may_cross(machine_, mode, 0));
        FitKey key = fit_key(machine_, s, index, a, run);
        if (!best || key < best->key) best = BoxChoice{Box{a, s}, key};
      }
    }
    return best;
  }

  std::optional<Box> largest_free_box(const NodeSet& free, PlacementMode mode) const override {
    std::optional<Box> best;
    for (NodeId id = 0; id < machine_.node_count(); ++id) {
      if (!free.test(id)) continue;
      Coords a = machine_.coords(id);
      Shape extents(machine_.dims(), 1);
      grow(free, mode, a, extents, 0, best);
    }
    return best;
  }

 private:
  int max_extent(const Coords& a, int axis, PlacementMode mode) const {
    const int n = machine_.extent(axis);
    return may_cross(machine_, mode, axis) ? n : n - a[axis];
  }

  bool anchor_valid(const Coords& a, const Shape& s, PlacementMode mode) const {
    for (int k = 0; k < machine_.dims(); ++k)
      if (s[k] > max_extent(a, k, mode)) return false;
    return true;
  }

  // Is every node of the box with anchor a and extents s free, skipping offsets below `from` on
  // `axis` (so that a grown box checks only its new slab)?
  bool box_free(const NodeSet& free, const Coords& a, const Shape& s, int axis = 0,
                int from = 0) const {
    const int dims = machine_.dims();
    Coords offset{};
    offset[axis] = from;
    while (true) {
      Coords c{};
      for (int k = 0; k < dims; ++k) c[k] = (a[k] + offset[k]) % machine_.extent(k);
      if (!free.test(machine_.id(c))) return false;
      int k = 0;
      while (k < dims && ++offset[k] == s[k]) {
        offset[k] = (k == axis) ? from : 0;
        ++k;
      }
      if (k == dims) return true;
    }
  }

  bool cross_section_free(const NodeSet& free, int column, const Coords& a, const Shape& s) const {
    Coords a2 = a;
    a2[0] = column;
    Shape s2 = s;
    s2[0] = 1;
    return box_free(free, a2, s2);
  }

  // Tries every extents tuple from `axis` on (earlier axes fixed), growing each extent while the
  // box stays free.
  void grow(const NodeSet& free, PlacementMode mode, const Coords& a, Shape& extents, int axis,
            std::optional<Box>& best) const {
    if (axis == machine_.dims()) {
      Box box{a, extents};
      if (!best || ranks_before_as_largest(machine_, box, *best)) best = box;
      return;
    }
    const int limit = max_extent(a, axis, mode);
    for (int e = 1; e <= limit; ++e) {
      extents[axis] = e;
      if (e > 1 && !box_free(free, a, extents, axis, e - 1)) break;
      grow(free, mode, a, extents, axis + 1, best);
    }
    extents[axis] = 1;
  }

  Torus machine_;
};

}  // namespace

std::unique_ptr<BoxSearch> make_brute_force_search(const Torus& machine) {
  return std::make_unique<BruteForceSearch>(machine);
}

}  // namespace trellis
