// HostNetwork: separate hosts on one machine, for tests and `trellis cluster up --netns`. Each
// host is a network namespace of its own with one address on a private bridge; the controller
// stays in the machine's own namespace and reaches the hosts (and they each other) through the
// bridge, as separate machines on one switch would. Nothing is routed or forwarded beyond the
// bridge, so no traffic leaves the machine.
//
//   bridge trbrI  10.A.B.1/24 (the controller's address)
//     veth tvI-0 ── namespace trellis-I-0: eth0 10.A.B.2/24, lo
//     veth tvI-1 ── namespace trellis-I-1: eth0 10.A.B.3/24, lo
//     ...
//
// I is a number free on this machine (the bridge's name is taken atomically, so clusters set
// up at the same time never share one) and 10.A.B.0/24 the subnet it stands for, skipped when
// any interface of the machine already routes it. Everything is made with iproute2's `ip`
// (Debian's iproute2), as root. remove() deletes what create() made, by name; save() and load()
// keep the names in a file so that another process (`cluster down`) can remove them.
//
// Unix sockets are not network-namespaced: processes in the hosts still reach a munged socket
// on the shared filesystem, as hosts of a real cluster each reach their own munged with one key.
//
//   Result<HostNetwork> net = HostNetwork::create(4);
//   start_detached(command, log, pid_file, net->hosts()[k].namespace_path());
//   ...
//   net->remove();
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace trellis {

class HostNetwork {
 public:
  // One host: its namespace and address.
  struct Host {
    std::string name;     // the namespace, e.g. "trellis-12-0"
    std::string address;  // its IPv4 address on the bridge, e.g. "10.160.12.2"
    // The namespace's file, for setns(2) (start_detached's `netns`).
    std::string namespace_path() const { return "/run/netns/" + name; }
  };

  // The most hosts one network holds (a /24 less the bridge's own address).
  static constexpr int kMaxHosts = 250;

  // Whether namespaces can be made here: ok, or why not (not root, no `ip`, no netns support),
  // for tests to skip with the reason.
  static Status available();

  // Makes a bridge and `hosts` namespaces on it. On failure, whatever was made is removed.
  static Result<HostNetwork> create(int hosts);

  // The network that save() wrote to `file`.
  static Result<HostNetwork> load(const std::string& file);
  Status save(const std::string& file) const;

  // Deletes the namespaces (their veth ends go with them) and the bridge. Idempotent: what is
  // gone already is not an error.
  Status remove();

  const std::string& bridge() const { return bridge_; }
  // The bridge's address in the machine's own namespace: where the hosts reach the controller.
  const std::string& bridge_address() const { return bridge_address_; }
  const std::vector<Host>& hosts() const { return hosts_; }

 private:
  int index_ = -1;
  std::string bridge_;
  std::string bridge_address_;
  std::vector<Host> hosts_;
};

}  // namespace trellis
