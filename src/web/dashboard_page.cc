#include "web/dashboard_page.h"

// Defined by the generated trellis_dashboard_html.S (trellis_embed_file in CMakeLists.txt).
extern "C" const char trellis_dashboard_html_begin[];
extern "C" const char trellis_dashboard_html_end[];

namespace trellis::web {

std::string_view dashboard_html() {
  return {trellis_dashboard_html_begin,
          static_cast<size_t>(trellis_dashboard_html_end - trellis_dashboard_html_begin)};
}

}  // namespace trellis::web
