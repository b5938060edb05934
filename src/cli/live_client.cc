#include "cli/live_client.h"

namespace trellis::cli {

Result<LiveClient> connect_to_cluster(const std::string& conf) {
  Result<std::string> path = find_cluster_config(conf);
  if (!path) return path.error();
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

void add_conf_option(CLI::App& command, std::string& conf) {
  command.add_option("--conf", conf,
                     "The cluster's config file (default: $TRELLIS_CONF; `trellis cluster up` "
                     "writes DIR/trellis.toml)");
}

}  // namespace trellis::cli
