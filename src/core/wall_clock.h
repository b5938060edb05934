// The wall clock as the live system keeps time: seconds since the epoch, as a double (the
// controller's `now`, a launch's deadline, a tree message's time). The simulator's clock is
// virtual and never reads this.
#pragma once

#include <chrono>

namespace trellis {

inline double wall_clock_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace trellis
