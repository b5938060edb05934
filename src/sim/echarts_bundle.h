// The Apache ECharts library (web/package.json pins the version), embedded into the binary at
// build time (CMakeLists.txt) so reports can inline it.
#pragma once

#include <string_view>

namespace trellis {

// The minified library, as shipped in echarts/dist/echarts.min.js.
std::string_view echarts_js();

}  // namespace trellis
