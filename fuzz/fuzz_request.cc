// Job requests (--request "4x2x2" or "64", core/request.h): the first byte picks rotation and the
// placement mode. A parsed request's count is the volume of its shape.
#include "core/request.h"
#include "fuzz_support.h"

using namespace trellis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  bool rotate = data[0] & 1;
  PlacementMode mode = (data[0] >> 1) % 3 == 0   ? PlacementMode::kTorus
                       : (data[0] >> 1) % 3 == 1 ? PlacementMode::kMesh
                                                 : PlacementMode::kNonContiguous;
  std::string_view text = fuzz::as_text(data + 1, size - 1);
  (void)parse_placement_mode(text);
  if (Result<Shape> shape = parse_shape(text); shape) {
    for (int extent : *shape) FUZZ_CHECK(extent >= 1, "an extent below 1 in " + std::string(text));
  }
  Result<Request> request = parse_request(text, rotate, mode);
  if (!request) return 0;
  FUZZ_CHECK(request->nodes >= 1, "no nodes from '" + std::string(text) + "'");
  if (request->has_shape()) {
    long long volume = 1;
    for (int extent : request->shape) volume *= extent;
    FUZZ_CHECK(volume == request->nodes, "shape volume != nodes for '" + std::string(text) + "'");
  }
  return 0;
}
