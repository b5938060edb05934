#include "daemon/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace trellis {

void log_line(std::string_view text) {
  using Clock = std::chrono::system_clock;
  Clock::time_point now = Clock::now();
  std::time_t seconds = Clock::to_time_t(now);
  long millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &local);
  char millis_text[8];
  std::snprintf(millis_text, sizeof millis_text, ".%03ld ", millis);
  std::string line = std::string(stamp) + millis_text + std::string(text) + "\n";
  // One write() per line: lines of different threads never interleave.
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace trellis
