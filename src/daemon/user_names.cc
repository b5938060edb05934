#include "daemon/user_names.h"

#include <pwd.h>

#include <chrono>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace trellis {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRemembered = std::chrono::seconds(60);
constexpr size_t kMostRemembered = 65536;  // then the table starts again

struct Known {
  std::string name;
  Clock::time_point until;
};

std::string look_up(int uid) {
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwuid_r(static_cast<uid_t>(uid), &entry, buffer.data(), buffer.size(), &found) == 0 &&
      found)
    return entry.pw_name;
  return std::to_string(uid);
}

}  // namespace

std::string user_name(int uid) {
  static std::mutex mutex;
  static std::unordered_map<int, Known> known;
  const Clock::time_point now = Clock::now();
  {
    std::lock_guard lock(mutex);
    auto it = known.find(uid);
    if (it != known.end() && now < it->second.until) return it->second.name;
  }
  std::string name = look_up(uid);  // outside the lock: NSS may be slow
  std::lock_guard lock(mutex);
  if (known.size() >= kMostRemembered) known.clear();
  known[uid] = {name, now + kRemembered};
  return name;
}

}  // namespace trellis
