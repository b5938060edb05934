// The occupancy map of seed 003's showmesh, as text: every node of the machine drawn as one
// character (a job's letter, '.' idle, '#' down, 'x' drained), laid out as the machine is: the
// x-y grid of a 2-D mesh or torus, the x-y planes of a 3-D one side by side (z = 0, 1, ...),
// one row per leaf switch of a fat tree. A legend names each letter's job.
#pragma once

#include <string>
#include <vector>

#include "store/state_store.h"
#include "topology/machine.h"

namespace trellis::cli {

std::string occupancy_map(const Machine& machine, const std::vector<StoredNode>& nodes,
                          const std::vector<StoredJob>& jobs);

}  // namespace trellis::cli
