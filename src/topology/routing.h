// Routing rules on a mesh/torus of up to 3 axes, as seed 004 states them (digest 4.3), in a
// form the channel-dependency check (topology/channel_dependency.h) can enumerate.
//
// A packet moves in the six directions +x -x +y -y +z -z. The rules are:
//   phases   an ordered list of sets of permitted output directions. A route never returns to
//            an earlier phase. Seed 004's default table "A" is
//              phase 1 {+x,-x,+y,+z}   phase 2 {-y,+z}   phase 3 {-z}
//            B swaps the y signs, C the z signs, D both; "dor" is dimension order
//            {+x,-x} | {+y,-y} | {+z,-z}.
//   phase    which phase a hop enters when several permit its direction: "earliest" (the literal
//            reading: a +z hop may stay in phase 1) or "latest" (a +z hop ends phase 1, which is
//            what a table indexed by input port does anyway; digest 8 A-2).
//   dateline how the two logical channels break the rings of wrapping axes. Every route starts
//            on channel 0.
//              through   at a router on the last plane of a wrapping axis, traffic continuing in
//                        that axis goes out on channel 1; channel 1 may not continue (P2's words)
//              boundary  at that plane every output in the axis goes on channel 1, and channel 1
//                        may not be output in the axis there
//              link      crossing a wrap link moves a packet to channel 1; channel 1 may not
//                        cross one (the recommended "link dateline")
//              none      no channel changes
//   channels on mesh (non-wrapping) axes a packet keeps its channel ("keep", rule V1), or may
//            take either ("free", the prior art that P2 says can deadlock).
// U-turns are never allowed. Presets: "recommended" = table=A,phase=latest,dateline=link,
// channels=keep; "literal" = table=A,phase=earliest,dateline=through,channels=keep;
// "prior-art" = literal with channels=free; "dor" = table=dor,phase=earliest,dateline=link.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "topology/torus.h"

namespace trellis {

// Directions: 2*axis for +, 2*axis+1 for -. "+x" is 0, "-z" is 5.
constexpr int kDirections = 6;
constexpr int kInjected = kDirections;  // the "last direction" of a packet before its first hop
std::string direction_name(int dir);
inline int opposite(int dir) {
  return dir ^ 1;
}

// The router one hop from `node` in `dir`, or -1 at a mesh face or along an axis of extent 1.
// `crosses_wrap` (optional) tells whether the hop uses a wrap-around link.
NodeId neighbour(const Torus& torus, NodeId node, int dir, bool* crosses_wrap = nullptr);

struct RoutingRules {
  enum class PhaseChoice { kEarliest, kLatest };
  enum class Dateline { kThrough, kBoundary, kLink, kNone };

  std::string table = "A";  // the phase table's name, for messages
  std::vector<std::array<bool, kDirections>> phases;
  PhaseChoice phase_choice = PhaseChoice::kLatest;
  Dateline dateline = Dateline::kLink;
  bool keep_channel_on_mesh_axes = true;

  // Seed 004's phase table by name: A, B, C, D, or dor.
  static Result<RoutingRules> with_table(std::string_view name);
  // "recommended", "literal", "prior-art", "dor", optionally followed by ",key=value" overrides
  // (table=, phase=, dateline=, channels=), or just the overrides. Errors name the bad part.
  static Result<RoutingRules> parse(std::string_view text);

  // "table=A phase=latest dateline=link channels=keep"
  std::string describe() const;
};

// What the rules remember about a packet at a router.
struct WalkState {
  NodeId node = 0;
  int phase = 0;         // index into RoutingRules::phases
  int vc = 0;            // the channel it arrived on (0 at injection, rule V0)
  int last = kInjected;  // the direction of the hop that brought it here
};

// The states the rules allow one hop from `from` in `dir` on a mesh/torus of up to 3 axes: none,
// one, or two (when the channel is free on a mesh axis). Writes them to `out` and returns how
// many; a successor's vc is the channel the hop itself uses.
int successors(const Torus& torus, const RoutingRules& rules, const WalkState& from, int dir,
               std::array<WalkState, 2>& out);

}  // namespace trellis
