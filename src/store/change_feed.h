// ChangeFeed: how a controller learns, without polling, that another process committed a change
// to a shared store. On PostgreSQL every counted write announces itself on a channel (NOTIFY, see
// postgres_session.h) and the feed listens to it (LISTEN) on a connection of its own.
//
//   Result<std::unique_ptr<ChangeFeed>> feed = open_change_feed(config.store);
//   if (*feed) while (running) if (Result<bool> changed = (*feed)->wait(1.0); changed && *changed)
//     wake_the_scheduler();
//
// Used by one thread. A feed may say "changed" for a change of this process's own.
#pragma once

#include <memory>
#include <string_view>

#include "core/job.h"
#include "core/result.h"

namespace trellis {

class ChangeFeed {
 public:
  virtual ~ChangeFeed() = default;
  // Waits up to `timeout` seconds for a change; true if at least one came. A lost connection is
  // an error, and the next call connects again.
  virtual Result<bool> wait(Seconds timeout) = 0;
};

// The feed of the store at `url`, or nullptr for an engine that has none (SQLite serves one host,
// where a controller reads the version whenever it wakes).
Result<std::unique_ptr<ChangeFeed>> open_change_feed(std::string_view url);

}  // namespace trellis
