#include "cli/alloc_report.h"

#include <iomanip>
#include <iostream>

#include "alloc/metrics.h"
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
  out << "avg hops:   " << std::fixed << std::setprecision(2)
      << average_pairwise_hops(machine, placement.nodes) << " (mean over pairs of its nodes)\n";
  out.unsetf(std::ios_base::floatfield);
  out << "free after: " << free_after.count() << " nodes\n";
  if (const Torus* torus = machine.torus()) {
    auto largest = largest_free_box(*torus, free_after);
    out << "left:       ";
    if (largest)
      out << "largest free box " << largest->describe(*torus) << ", " << largest->volume()
          << " nodes" << (largest->crosses_wrap(*torus) ? " (across the wrap-around)" : "") << "\n";
    else
      out << "no free node\n";
  }
}

}  // namespace trellis::cli
