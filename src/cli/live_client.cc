#include "cli/live_client.h"

#include <cstdlib>

#include "daemon/grpc_status.h"

namespace trellis::cli {

Result<LiveClient> connect_to_cluster(const std::string& conf) {
  Result<std::string> path = find_cluster_config(conf);
  if (!path) {
    // Inside a job the agent names the controllers (TRELLIS_CONTROLLERS, TRELLIS_MUNGE_SOCKET)
    // when the job's environment names no config file.
    const char* controllers = std::getenv("TRELLIS_CONTROLLERS");
    if (!controllers || !*controllers) return path.error();
    LiveClient client;
    std::string list = controllers;
    for (size_t start = 0; start <= list.size();) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      if (comma > start) client.config.controllers.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
    if (const char* munge = std::getenv("TRELLIS_MUNGE_SOCKET")) client.config.munge_socket = munge;
    ControllerClient::Options options;
    options.addresses = client.config.controllers;
    options.munge_socket = client.config.munge_socket;
    client.controllers = std::make_unique<ControllerClient>(options);
    return client;
  }
  Result<ClusterConfig> config = load_cluster_config(*path);
  if (!config) return config.error();
  LiveClient client;
  client.config = std::move(*config);
  ControllerClient::Options options;
  options.addresses = client.config.controllers;
  options.munge_socket = client.config.munge_socket;
  client.controllers = std::make_unique<ControllerClient>(options);
  return client;
}

Result<v1::ListJobsReply> list_jobs(LiveClient& client, const v1::ListJobsRequest& request) {
  v1::ListJobsReply reply;
  grpc::Status status =
      client.controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.ListJobs(&context, request, &reply);
      });
  if (!status.ok()) return from_grpc(status, "listing jobs");
  return reply;
}

Result<v1::ListNodesReply> list_nodes(LiveClient& client, const v1::ListNodesRequest& request) {
  v1::ListNodesReply reply;
  grpc::Status status =
      client.controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.ListNodes(&context, request, &reply);
      });
  if (!status.ok()) return from_grpc(status, "listing nodes");
  return reply;
}

Result<v1::ListAccountsReply> list_accounts(LiveClient& client) {
  v1::ListAccountsReply reply;
  grpc::Status status =
      client.controllers->call([&](v1::Controller::Stub& stub, grpc::ClientContext& context) {
        return stub.ListAccounts(&context, v1::ListAccountsRequest(), &reply);
      });
  if (!status.ok()) return from_grpc(status, "listing the accounts");
  return reply;
}

Result<std::string> store_to_read(const std::string& conf, const std::string& store_flag) {
  if (!store_flag.empty()) return store_flag;
  Result<std::string> path = find_cluster_config(conf);
  if (!path) return path.error();
  Result<ClusterConfig> config = load_cluster_config(*path);
  if (!config) return config.error();
  return config->store;
}

void add_conf_option(CLI::App& command, std::string& conf) {
  command.add_option("--conf", conf,
                     "The cluster's config file (default: $TRELLIS_CONF; `trellis cluster up` "
                     "writes DIR/trellis.toml)");
}

}  // namespace trellis::cli
