#include "sim/echarts_bundle.h"

// Defined by the generated trellis_echarts.S (trellis_embed_file in CMakeLists.txt).
extern "C" const char trellis_echarts_begin[];
extern "C" const char trellis_echarts_end[];

namespace trellis {

std::string_view echarts_js() {
  return {trellis_echarts_begin, static_cast<size_t>(trellis_echarts_end - trellis_echarts_begin)};
}

}  // namespace trellis
