// NetnsCluster: a LiveCluster whose agents live on separate hosts, as far as the network goes:
// `trellis cluster up --netns` puts each agent in a network namespace of its own with its own
// address on a private bridge (src/daemon/host_network.h), the controllers on the bridge, and
// `cluster down` removes them. Everything between the daemons then crosses a real network
// interface (registration, launches, exits, heartbeats, gang switches, agent-to-agent calls), and
// a job's processes run in their agent's namespace, so that a job's ranks talk across hosts.
//
//   TEST(MyTest, AcrossHosts) {
//     if (std::string why = NetnsCluster::unavailable(); !why.empty()) GTEST_SKIP() << why;
//     NetnsCluster cluster("--machine flat:4 --agents 4");
//     ASSERT_EQ(cluster.up().status, 0) << cluster.up().output;
//     cluster.host(2).address;                 // agent 2's address, e.g. 10.160.7.4
//     cluster.in_host(2, "ip -4 addr");        // a command run on agent 2's host
//     ::kill(cluster.pid_of("agent-2"), SIGKILL);
//     cluster.start_agent(2);                  // back, in the same namespace and state directory
//   }
//
// Namespaces need root and iproute2; unavailable() says why they cannot be made, for a test to
// skip with the reason (CI runs as root, so there they run).
#pragma once

#include <string>

#include "daemon/host_network.h"
#include "live_cluster.h"

namespace trellis::testing {

class NetnsCluster : public LiveCluster {
 public:
  // "" when namespaces can be made here, else why not.
  static std::string unavailable() {
    Status ok = HostNetwork::available();
    return ok ? "" : "network namespaces are unavailable: " + ok.error().message;
  }

  // `options` as for `trellis cluster up` (without --dir and --netns).
  explicit NetnsCluster(const std::string& options) : LiveCluster(options + " --netns") {}

  // The bridge and the agents' hosts, as `cluster up` recorded them (empty before it did).
  HostNetwork network() const {
    Result<HostNetwork> net = HostNetwork::load(dir() / "network.json");
    return net ? *net : HostNetwork();
  }
  // Agent k's host (its namespace and address).
  HostNetwork::Host host(int k) const { return network().hosts().at(static_cast<size_t>(k)); }

  // Runs `command` (sh -c) on agent k's host: in its network namespace, nothing else changed.
  test::CommandRun in_host(int k, const std::string& command) const {
    std::string quoted;
    for (char c : command) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return test::run_command("nsenter --net=" + host(k).namespace_path() + " -- sh -c '" + quoted +
                             "'");
  }

  // Starts agent k again as `cluster up` did (after a kill -9): same arguments, state directory
  // and host.
  test::CommandRun start_agent(int k) const {
    return trellis("cluster start-agent --dir " + dir().path() + " " + std::to_string(k));
  }
};

}  // namespace trellis::testing
