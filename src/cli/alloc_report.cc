#include "cli/alloc_report.h"

#include <iostream>

#include "core/hostlist.h"

namespace trellis::cli {

int usage_error(const Error& error) {
  std::cerr << "trellis: " << error.message << "\n";
  return 2;
}

std::string default_allocator_for(const Machine& machine) {
  return machine.torus() ? "contiguous" : "first-available";
}

void print_alloc_header(std::ostream& out, const Machine& machine, const std::string& allocator,
                        const Request& request, const NodeSet& free) {
  out << "machine:    " << machine.spec() << " (" << machine.describe() << "), " << free.count()
      << " free\n";
  out << "allocator:  " << allocator << "\n";
  out << "request:    ";
  if (request.has_shape())
    out << format_shape(request.shape) << " (" << request.nodes << " nodes, "
        << (request.rotate ? "rotation allowed" : "no rotation") << ", " << to_string(request.mode)
        << " mode)\n";
  else
    out << request.nodes << " nodes (" << to_string(request.mode) << " mode)\n";
}

void print_placement(std::ostream& out, const Machine& machine, const Placement& placement,
                     const NodeSet& free_after) {
  if (placement.box && machine.torus())
    out << "placed:     box " << placement.box->describe(*machine.torus())
        << (placement.box->crosses_wrap(*machine.torus()) ? " (crosses the wrap-around)" : "")
        << "\n";
  out << "nodes:      " << format_hostlist(placement.nodes) << " (" << placement.nodes.count()
      << ")\n";
  if (!placement.note.empty()) out << "note:       " << placement.note << "\n";
  out << "free after: " << free_after.count() << " nodes\n";
}

}  // namespace trellis::cli
