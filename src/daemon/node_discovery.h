// What this host has, as hwloc finds it: sockets (packages), cores, hardware threads per core,
// NUMA nodes, memory and GPUs, as a NodeInventory (core/node_inventory.h), for the agent to hand
// the controller when it registers; the controller drains a node whose [[nodetype]] claims more
// (core/node_inventory.h: shortfall()), with the shortfall as the reason.
//
// libhwloc is loaded with dlopen (as the job shell does, shell/node_topology.h), so that the
// programs that link the daemon library and never discover (the CLI) do not map it. Tests give a
// synthetic topology ("pack:2 numa:1 core:4 pu:2", hwloc's syntax) or an XML file instead of this
// host.
//
// GPUs are the OS devices hwloc classes as GPUs and names "nvidia*" or "card*" (the DRM device of
// each card, one per GPU; "renderD*" would count each twice).
#pragma once

#include <string>

#include "core/node_inventory.h"
#include "core/result.h"

namespace trellis {

struct DiscoveryOptions {
  std::string synthetic;  // hwloc's synthetic description instead of this host
  std::string xml_file;   // an hwloc XML export instead of this host
};

// kUnavailable when libhwloc cannot be loaded or fails; the error names the step.
Result<NodeInventory> discover_node(const DiscoveryOptions& options = {});

}  // namespace trellis
