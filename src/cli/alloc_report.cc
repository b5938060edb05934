#include "cli/alloc_report.h"

#include <iomanip>
#include <iostream>

#include "alloc/metrics.h"
#include "core/hostlist.h"

namespace trellis::cli {

int usage_error(const Error& error) {
  std::cerr << "trellis: " << error.message << "\n";
  return kExitUsage;
}

void print_alloc_header(std::ostream& out, const Machine& machine, const std::string& allocator,
                        const Request& request, const NodeSet& free) {
  out << "machine:    " << machine.spec() << " (" << machine.describe() << "), " << free.count()
      << " free\n";
  out << "allocator:  " << allocator << "\n";
  out << "request:    ";
  const std::string mode =
      machine.torus() ? std::string(to_string(request.mode)) + " mode" : std::string();
  if (request.has_shape())
    out << format_shape(request.shape) << " (" << request.nodes << " nodes, "
        << (request.rotate ? "rotation allowed" : "no rotation") << ", " << mode << ")\n";
  else
    out << request.nodes << " nodes" << (mode.empty() ? "" : " (" + mode + ")") << "\n";
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

namespace {

nlohmann::json box_json(const Box& box, const Torus& torus) {
  nlohmann::json origin = nlohmann::json::array();
  for (int a = 0; a < torus.dims(); ++a) origin.push_back(box.anchor[a]);
  return {{"origin", origin},
          {"shape", box.extents},
          {"text", box.describe(torus)},
          {"crosses_wrap", box.crosses_wrap(torus)}};
}

}  // namespace

std::string why_not_placed(const Machine& machine, const Request& request, const NodeSet& free,
                           const Error& error) {
  if (error.code != Error::Code::kDoesNotFitNow) return error.message;
  const Torus* torus = machine.torus();
  const bool box = torus && request.mode != PlacementMode::kNonContiguous;
  std::string what = request.has_shape() ? "box " + format_shape(request.shape)
                     : box               ? "box of " + std::to_string(request.nodes) + " nodes"
                                         : std::to_string(request.nodes) + " nodes";
  std::string text = "no free " + what + " now (" + std::to_string(free.count()) + " nodes free";
  if (box)
    if (auto largest = largest_free_box(*torus, free, request.mode))
      text += ", largest free box " + largest->describe(*torus);
  return text + ")";
}

nlohmann::json alloc_decision_json(const Machine& machine, const std::string& allocator,
                                   const Request& request, const NodeSet& free,
                                   const Placement* placement, const std::string& reason) {
  nlohmann::json asked = {{"nodes", request.nodes}};
  if (request.has_shape()) {
    asked["shape"] = request.shape;
    asked["rotate"] = request.rotate;
  }
  if (machine.torus()) asked["mode"] = std::string(to_string(request.mode));
  nlohmann::json doc = {{"machine", machine.spec()},  {"machine_description", machine.describe()},
                        {"allocator", allocator},     {"request", asked},
                        {"free_nodes", free.count()}, {"placed", placement != nullptr}};
  if (!placement) {
    doc["reason"] = reason;
    return doc;
  }
  nlohmann::json chosen = {{"hostlist", format_hostlist(placement->nodes)},
                           {"nodes", placement->nodes.to_vector()},
                           {"count", placement->nodes.count()}};
  if (placement->box && machine.torus())
    chosen["box"] = box_json(*placement->box, *machine.torus());
  if (!placement->note.empty()) chosen["note"] = placement->note;
  doc["placement"] = chosen;
  NodeSet free_after = free - placement->nodes;
  nlohmann::json metrics = {
      {"average_pairwise_hops", average_pairwise_hops(machine, placement->nodes)},
      {"free_after", free_after.count()}};
  if (const Torus* torus = machine.torus()) {
    auto largest = largest_free_box(*torus, free_after);
    metrics["largest_free_box_after"] = largest ? box_json(*largest, *torus) : nlohmann::json();
    if (largest) metrics["largest_free_box_after"]["volume"] = largest->volume();
  }
  doc["metrics"] = metrics;
  return doc;
}

}  // namespace trellis::cli
