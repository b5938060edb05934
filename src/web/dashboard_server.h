// DashboardServer: `trellis web`, a read-only HTTP server over the store. It serves the
// single-page dashboard (web/dashboard.html, embedded into the binary with the chart library)
// and the JSON API of web/dashboard_api.h. It opens the store read-only and never calls a
// controller, so it keeps answering while every controller is down.
//
//   Result<std::unique_ptr<DashboardServer>> server =
//       DashboardServer::start({.store_url = "sqlite:/tmp/c/state.db", .port = 8080});
//   (*server)->wait();  // until stop() (another thread, or a signal handler's thread)
//
// HTTP is cpp-httplib's (Debian libcpp-httplib-dev); requests are served on its thread pool.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/node_inventory.h"
#include "core/result.h"
#include "store/state_store.h"
#include "web/event_history.h"

namespace httplib {
class Server;
}

namespace trellis::web {

struct DashboardOptions {
  std::string store_url;
  std::string host = "127.0.0.1";  // loopback unless asked otherwise (--listen)
  int port = 0;                    // 0: any free port (port() tells which)
  // What each node has (by node id, from the config's [[nodetype]]s; empty: not known), for the
  // nodes' free cores, memory and GPUs.
  std::vector<NodeInventory> inventories;
};

// "127.0.0.1:8080", ":8080" (loopback) or "8080" -> host and port; an error names the bad part.
Result<std::pair<std::string, int>> parse_listen_address(const std::string& text);

class DashboardServer {
 public:
  // Opens the store and starts listening; an error when the store cannot be opened or the
  // address cannot be bound.
  static Result<std::unique_ptr<DashboardServer>> start(const DashboardOptions& options);
  ~DashboardServer();  // stops

  int port() const { return port_; }
  const std::string& host() const { return host_; }
  // Blocks until stop().
  void wait();
  void stop();

 private:
  DashboardServer() = default;
  void add_routes();

  std::unique_ptr<StateStore> store_;
  std::unique_ptr<httplib::Server> http_;
  std::thread listener_;
  std::string host_;
  std::vector<NodeInventory> inventories_;
  int port_ = 0;
  int node_count_ = 0;
  std::mutex history_mutex_;
  EventHistory history_;  // guarded by history_mutex_
};

}  // namespace trellis::web
