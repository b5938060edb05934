// Deadlock check of routing rules (Dally & Seitz 1987; digest 4.4): build the channel
// dependency graph (CDG) of every walk the rules allow and look for a cycle.
//
// A channel is one logical channel (0 or 1) of the link that leaves a router in one direction.
// Channel c1 depends on c2 when some packet the rules allow can hold c1 and ask for c2 next. To
// cover routes programmed around faults, every walk is enumerated, not only minimal routes: a
// walk's state is (router, phase, channel, last direction); every router injects in phase 1 on
// channel 0; no U-turns; x, y, z are the machine's axes 0..2 (mesh or torus as the machine says).
// An acyclic CDG means the rules cannot deadlock; a cycle is reported as the channels on it.
//
// Cost: at most routers x phases x 2 channels x 7 last directions states, six moves each; the
// rules reach far fewer (100,104 states on 27x16x24 with the recommended rules).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "topology/routing.h"
#include "topology/torus.h"

namespace trellis {

struct Channel {
  NodeId node = 0;  // the router the link leaves
  int direction = 0;
  int vc = 0;
};

struct DependencyCheck {
  bool acyclic = true;
  std::vector<Channel> cycle;  // when cyclic: c0 -> c1 -> ... -> back to c0
  long states = 0;             // walk states reached
  long channels = 0;           // channels some walk uses
  long dependencies = 0;       // CDG edges
};

// Errors: more than 3 axes.
Result<DependencyCheck> check_channel_dependencies(const Torus& torus, const RoutingRules& rules);

// "(1,2,3) +z ch0"
std::string format_channel(const Torus& torus, const Channel& channel);

}  // namespace trellis
