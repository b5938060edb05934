// What every client command of a live cluster needs: its config (found through --conf or
// TRELLIS_CONF), MUNGE credentials, and calls to its controllers with failover.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include "daemon/auth.h"
#include "daemon/config.h"

#include "daemon/controller_client.h"

namespace trellis::cli {

struct LiveClient {
  ClusterConfig config;
  std::unique_ptr<ControllerClient> controllers;
};

// `conf`: the --conf flag's value ("" = TRELLIS_CONF).
Result<LiveClient> connect_to_cluster(const std::string& conf);

// The two listings every client command reads, through whichever controller answers; an error
// says what was being listed.
Result<v1::ListJobsReply> list_jobs(LiveClient& client, const v1::ListJobsRequest& request);
Result<v1::ListNodesReply> list_nodes(LiveClient& client, const v1::ListNodesRequest& request);
// The site's accounts, users and associations with their fair-share figures (sacctmgr, sshare).
Result<v1::ListAccountsReply> list_accounts(LiveClient& client);

// The store the read path opens (showmesh, web): `store_flag` when given, else the store of the
// cluster found through `conf` ("" = TRELLIS_CONF).
Result<std::string> store_to_read(const std::string& conf, const std::string& store_flag);

// Adds the --conf option every client command takes.
void add_conf_option(CLI::App& command, std::string& conf);

}  // namespace trellis::cli
