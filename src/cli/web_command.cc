// trellis web: the dashboard of a live cluster, served read-only from its store (web/).
#include <signal.h>

#include <iostream>

#include "cli/alloc_report.h"
#include "cli/commands.h"
#include "cli/live_client.h"
#include "daemon/config.h"
#include "daemon/node_types.h"
#include "topology/machine.h"
#include "web/dashboard_server.h"

namespace trellis::cli {
namespace {

int run_web(const std::string& conf, const std::string& store_flag, const std::string& listen) {
  Result<std::pair<std::string, int>> address = web::parse_listen_address(listen);
  if (!address) return usage_error(address.error());
  Result<std::string> store_url = store_to_read(conf, store_flag);
  if (!store_url) return usage_error(store_url.error());
  // The server's threads inherit the mask: only this thread takes the signals, in sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  web::DashboardOptions options;
  options.store_url = *store_url;
  options.host = address->first;
  options.port = address->second;
  // The nodes' types, when the config can be read: the map then shows what is free of each.
  if (Result<std::string> path = find_cluster_config(conf); path)
    if (Result<ClusterConfig> config = load_cluster_config(*path); config)
      if (Result<Machine> machine = Machine::parse(config->machine); machine)
        if (Result<NodeTypes> types = NodeTypes::build(config->node_types, machine->node_count());
            types && !types->empty())
          for (NodeId id = 0; id < machine->node_count(); ++id)
            if (const NodeInventory* has = types->of(id)) {
              options.inventories.resize(static_cast<size_t>(id) + 1);
              options.inventories[id] = *has;
            }
  Result<std::unique_ptr<web::DashboardServer>> server = web::DashboardServer::start(options);
  if (!server) {
    std::cerr << "trellis web: " << server.error().message << "\n";
    return server.error().code == Error::Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  std::cout << "trellis web: http://" << (*server)->host() << ":" << (*server)->port()
            << "/ (store " << *store_url << ", read-only); Ctrl-C stops it" << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  (*server)->stop();
  (*server)->wait();
  return kExitOk;
}

}  // namespace

void add_web_command(CLI::App& app, int& status) {
  auto conf = std::make_shared<std::string>();
  auto store = std::make_shared<std::string>();
  auto listen = std::make_shared<std::string>("127.0.0.1:8080");
  CLI::App* cmd = app.add_subcommand(
      "web",
      "Serve the cluster's dashboard (machine map, queue, job details, history) and its JSON API\n"
      "(/api/nodes, /api/jobs?state=&user=, /api/jobs/ID, /api/utilization?since=SECONDS),\n"
      "read straight from the store: it keeps working while every controller is down");
  add_conf_option(*cmd, *conf);
  cmd->add_option("--store", *store,
                  "The store to read instead of the cluster's (sqlite:PATH or postgresql://...; "
                  "give PostgreSQL a read-only role)");
  cmd->add_option("--listen", *listen,
                  "HOST:PORT to serve on (default 127.0.0.1:8080; port 0 picks a free one)");
  cmd->callback([=, &status] { status = run_web(*conf, *store, *listen); });
}

}  // namespace trellis::cli
