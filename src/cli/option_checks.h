// Checks shared by the commands that place jobs (alloc, demo, sim, sim-compare), made before any
// work starts, so that an option that would be recorded and ignored is refused instead (exit 2).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "alloc/registry.h"
#include "core/request.h"
#include "topology/machine.h"

namespace trellis::cli {

// The --mode values, for help texts.
inline constexpr const char* kModeHelp =
    "Placement mode: auto (default: the machine's own, torus on a mesh/torus, noncont on a fat "
    "tree or flat machine), torus (one box that may cross the wrap-around), mesh (one box that "
    "does not) or noncont (any nodes); torus and mesh need a mesh/torus machine and bind only "
    "allocators that place boxes (contiguous), the others take any nodes";

// The mode `text` names on `machine`: "auto" (or empty) is the machine's own mode; torus and mesh
// are refused on machines that are not a mesh/torus, where they would mean nothing.
Result<PlacementMode> placement_mode_for(const std::string& text, const Machine& machine);

// Refuses a mode the allocator cannot honour (noncont with an allocator that places only boxes);
// the message names allocators for this machine that take any nodes.
Status check_allocator_takes_mode(const AllocatorInfo& allocator, PlacementMode mode,
                                  const Machine& machine);

// Refuses --shape-requests where it would be ignored: on machines that are not a mesh/torus, and
// with noncont mode.
Status check_shaped_requests(bool shaped, PlacementMode mode, const Machine& machine);

// Refuses a name that is neither a queue policy nor a gang policy, listing both kinds.
Status check_policy_name(const std::string& policy);

// A CLI11 check that a value is a positive whole number; CLI11 prefixes the option's name:
// "--max-jobs: must be a positive whole number, not '0'" (exit 2).
CLI::Validator positive_whole_number();

}  // namespace trellis::cli
