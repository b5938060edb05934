// Shared printing for commands that show an allocation decision (alloc, demo).
#pragma once

#include <ostream>
#include <string>

#include "alloc/allocator.h"

namespace trellis::cli {

// Prints "trellis: <message>" to stderr and returns exit status 2 (usage or input error).
int usage_error(const Error& error);

// The allocator a command uses when none is named: contiguous on a mesh/torus.
std::string default_allocator_for(const Machine& machine);

void print_alloc_header(std::ostream& out, const Machine& machine, const std::string& allocator,
                        const Request& request, const NodeSet& free);
// The decision and what is left: box, hostlist, and metrics of the placement.
void print_placement(std::ostream& out, const Machine& machine, const Placement& placement,
                     const NodeSet& free_after);

}  // namespace trellis::cli
