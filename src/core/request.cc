#include "core/request.h"

#include <charconv>

namespace trellis {

static Result<long> parse_positive(std::string_view text, std::string_view what) {
  long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return fail(std::string(what) + " '" + std::string(text) + "' is not a whole number");
  if (value <= 0) return fail(std::string(what) + " must be at least 1, got " + std::string(text));
  if (value > 1'000'000'000)
    return fail(std::string(what) + " " + std::string(text) + " is too large");
  return value;
}

Result<Shape> parse_shape(std::string_view text) {
  Shape shape;
  size_t start = 0;
  while (true) {
    size_t cut = text.find('x', start);
    std::string_view part = text.substr(start, cut == std::string_view::npos ? cut : cut - start);
    auto extent = parse_positive(part, "shape extent");
    if (!extent) return fail("shape '" + std::string(text) + "': " + extent.error().message);
    shape.push_back(static_cast<int>(*extent));
    if (cut == std::string_view::npos) break;
    start = cut + 1;
  }
  if (shape.size() > kMaxDims)
    return fail("shape '" + std::string(text) + "' has " + std::to_string(shape.size()) +
                " dimensions; at most " + std::to_string(kMaxDims) + " are supported");
  // Checked extent by extent: the product of four large extents overflows a long.
  long volume = 1;
  for (int extent : shape) {
    volume *= extent;
    if (volume > kMaxShapeVolume)
      return fail("shape '" + std::string(text) + "' is too large (over " +
                  std::to_string(kMaxShapeVolume) + " nodes)");
  }
  return shape;
}

std::string format_shape(const Shape& shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += 'x';
    out += std::to_string(shape[i]);
  }
  return out;
}

long shape_volume(const Shape& shape) {
  long v = 1;
  for (int e : shape) v *= e;
  return v;
}

Result<PlacementMode> parse_placement_mode(std::string_view text) {
  if (text == "torus") return PlacementMode::kTorus;
  if (text == "mesh") return PlacementMode::kMesh;
  if (text == "noncont") return PlacementMode::kNonContiguous;
  return fail("mode '" + std::string(text) + "' is not one of torus, mesh, noncont");
}

std::string_view to_string(PlacementMode mode) {
  switch (mode) {
    case PlacementMode::kTorus:
      return "torus";
    case PlacementMode::kMesh:
      return "mesh";
    case PlacementMode::kNonContiguous:
      return "noncont";
  }
  return "?";
}

Request Request::count(int nodes, PlacementMode mode) {
  Request r;
  r.nodes = nodes;
  r.mode = mode;
  return r;
}

Request Request::box(Shape shape, bool rotate, PlacementMode mode) {
  Request r;
  r.nodes = static_cast<int>(shape_volume(shape));
  r.shape = std::move(shape);
  r.rotate = rotate;
  r.mode = mode;
  return r;
}

Result<Request> parse_request(std::string_view text, bool rotate, PlacementMode mode) {
  if (text.find('x') == std::string_view::npos) {
    auto count = parse_positive(text, "request node count");
    if (!count) return count.error();
    return Request::count(static_cast<int>(*count), mode);
  }
  auto shape = parse_shape(text);
  if (!shape) return shape.error();
  return Request::box(std::move(*shape), rotate, mode);
}

}  // namespace trellis
