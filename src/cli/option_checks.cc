#include "cli/option_checks.h"

#include "core/key_value.h"
#include "sched/gang/registry.h"
#include "sched/registry.h"

namespace trellis::cli {

namespace {

std::string machine_kind_name(const Machine& machine) {
  switch (machine.kind()) {
    case Machine::Kind::kTorus:
      return "mesh/torus";
    case Machine::Kind::kFatTree:
      return "fat tree";
    case Machine::Kind::kFlat:
      return "flat machine";
  }
  return "machine";
}

}  // namespace

Result<PlacementMode> placement_mode_for(const std::string& text, const Machine& machine) {
  if (text.empty() || text == "auto")
    return machine.torus() ? PlacementMode::kTorus : PlacementMode::kNonContiguous;
  auto mode = parse_placement_mode(text);
  if (!mode) return fail("--mode '" + text + "' is not one of auto, torus, mesh, noncont");
  if (*mode != PlacementMode::kNonContiguous && !machine.torus())
    return fail("--mode " + text + " places boxes on a mesh/torus, but " + machine.spec() +
                " is a " + machine_kind_name(machine) +
                ": leave --mode out (auto) or give --mode noncont");
  return *mode;
}

Status check_allocator_takes_mode(const AllocatorInfo& allocator, PlacementMode mode,
                                  const Machine& machine) {
  if (mode != PlacementMode::kNonContiguous || !allocator.places_only_boxes) return Ok{};
  std::string any_nodes;
  for (const auto& info : AllocatorRegistry::builtin().all())
    if (!info.places_only_boxes && info.factory(machine, {}).ok())
      any_nodes += (any_nodes.empty() ? "" : ", ") + info.name;
  return fail("allocator '" + allocator.name +
              "' places only boxes; --mode noncont needs an allocator that takes any nodes, e.g. " +
              any_nodes);
}

Status check_shaped_requests(bool shaped, PlacementMode mode, const Machine& machine) {
  if (!shaped) return Ok{};
  if (!machine.torus())
    return fail("--shape-requests turns node counts into boxes on a mesh/torus, but " +
                machine.spec() + " is a " + machine_kind_name(machine));
  if (mode == PlacementMode::kNonContiguous)
    return fail(
        "--shape-requests turns node counts into boxes, but --mode noncont takes any "
        "nodes: give one or the other");
  return Ok{};
}

Status check_policy_name(const std::string& policy) {
  if (PolicyRegistry::builtin().find(policy) || gang::GangPolicyRegistry::builtin().has(policy))
    return Ok{};
  return fail("unknown queue policy '" + policy + "', and no gang policy has that name" +
              " (queue policies: " + PolicyRegistry::builtin().names() +
              "; gang policies: " + gang::GangPolicyRegistry::builtin().names() + ")");
}

CLI::Validator positive_whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto value = parse_whole_number(text);
        if (value && *value >= 1) return {};
        return "must be a positive whole number, not '" + text + "'";
      },
      "POSITIVE WHOLE NUMBER");
}

}  // namespace trellis::cli
