// Shared printing for commands that show an allocation decision (alloc, demo).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "alloc/allocator.h"

namespace trellis::cli {

// Exit statuses of every subcommand (also in `trellis --help` and the README).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;         // something failed while running
inline constexpr int kExitUsage = 2;           // bad usage or bad input
inline constexpr int kExitNoPlacementNow = 3;  // trellis alloc: the job cannot be placed now

// Prints "trellis: <message>" to stderr and returns exit status 2 (usage or input error).
int usage_error(const Error& error);

// The request line says the placement mode only on a mesh/torus, where it means something.
void print_alloc_header(std::ostream& out, const Machine& machine, const std::string& allocator,
                        const Request& request, const NodeSet& free);
// The decision and what is left: box, hostlist, and metrics of the placement.
void print_placement(std::ostream& out, const Machine& machine, const Placement& placement,
                     const NodeSet& free_after);

// Why `request` was not placed on `free`, for people. Allocators say only that a request does not
// fit now (Error::Code::kDoesNotFitNow, no text built on the hot path); this builds the text from
// the request and the free set: "no free box 3x3 now (14 nodes free, largest free box 2x2 at
// (0,0))". Any other error gives its own message.
std::string why_not_placed(const Machine& machine, const Request& request, const NodeSet& free,
                           const Error& error);

// The decision as JSON: machine, allocator, request, free nodes, and either "placement" (nodes as
// a hostlist and a list, the box when there is one, a note) with "metrics", or "reason" when the
// job cannot be placed now. `placement` is null in that case.
nlohmann::json alloc_decision_json(const Machine& machine, const std::string& allocator,
                                   const Request& request, const NodeSet& free,
                                   const Placement* placement, const std::string& reason);

}  // namespace trellis::cli
