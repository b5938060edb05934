// The dashboard's single page (web/dashboard.html: HTML, CSS and script in one file), embedded
// into the binary at build time (CMakeLists.txt) so `trellis web` needs no files at run time.
#pragma once

#include <string_view>

namespace trellis::web {

std::string_view dashboard_html();

}  // namespace trellis::web
