// One line to the daemon's log (stderr), with a timestamp, written whole even from many threads.
#pragma once

#include <string_view>

namespace trellis {

void log_line(std::string_view text);

}  // namespace trellis
