// ControllerServer: trellisd's process around the Controller: the gRPC Controller service (each
// call authenticated with MUNGE, its errors mapped to status codes), the scheduler thread that
// runs passes when events want one (bursts of submissions coalesce into one pass) and ticks on
// the timer (time limits, liveness verdicts, promised starts, the scheduler lease), and the
// liveness thread: while this controller schedules, it pings every agent down the control tree
// each heartbeat interval and probes the silent ones directly (daemon/liveness.h), never waiting
// for the scheduler thread or the store. On a shared
// PostgreSQL store a watcher thread listens for other controllers' changes (store/change_feed.h)
// and wakes the scheduler thread; a clean stop gives the lease up, so another controller takes
// over at once instead of when it runs out.
//
//   Result<std::unique_ptr<ControllerServer>> server = ControllerServer::start(config);
//   (*server)->wait();   // until shutdown() (trellisd calls it on SIGTERM)
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "core/wall_clock.h"
#include "daemon/auth.h"
#include "daemon/config.h"
#include "daemon/controller.h"
#include "daemon/tree_agent_link.h"
#include "store/change_feed.h"
#include "store/state_store.h"

namespace grpc {
class Server;
}

namespace trellis {

class ControllerServer {
 public:
  // Opens the store, rebuilds the controller from it, listens (port 0: any free port, see
  // port()), and starts scheduling.
  static Result<std::unique_ptr<ControllerServer>> start(const ClusterConfig& config);
  ~ControllerServer();

  int port() const { return port_; }
  // Blocks until shutdown() is called.
  void wait();
  // Stops taking calls and scheduling (safe from a signal-watching thread).
  void shutdown();

  // Called by the service after an event: the scheduler thread looks again now.
  void poke();

 private:
  ControllerServer() = default;
  void schedule_loop();
  void watch_loop();
  void liveness_loop();

  ClusterConfig config_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<ChangeFeed> feed_;  // null on SQLite
  std::unique_ptr<CredentialSource> credentials_;
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<TreeAgentLink> agents_;
  std::unique_ptr<Controller> controller_;
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool poked_ = false;
  bool stopping_ = false;
  std::thread scheduler_;
  std::thread watcher_;
  std::thread liveness_;
};

}  // namespace trellis
