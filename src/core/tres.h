// TRES: Slurm's "trackable resources", the words its limits and usage are counted in, as a value
// type. A TRES string is a comma-separated list of name=count: "cpu=64,mem=256G,node=4,gres/gpu=8".
// Names are cpu, mem (megabytes; a K, M, G or T suffix scales it), node, billing, energy and
// gres/NAME (gres/gpu); any case, stored lower. A count is a whole number >= 0, at most 2^53 (a
// limit beyond it means nothing and would lose precision in a double); -1, as sacctmgr writes it,
// clears a limit ("node=-1"). The same name twice is an error, as is an empty item.
//
//   Result<Tres> limit = parse_tres("node=4,gres/gpu=8", "GrpTRES");
//   limit->count("node");   // 4
//   format_tres(*limit);    // "node=4,gres/gpu=8" (Slurm's order: cpu, mem, energy, node,
//                           // billing, then gres/... by name)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace trellis {

struct Tres {
  // name -> count; a name mapped to kCleared is one the text cleared ("node=-1").
  std::map<std::string, int64_t> counts;
  static constexpr int64_t kCleared = -1;

  // The count of `name`, or nullopt when the text does not limit it (absent or cleared).
  std::optional<int64_t> count(std::string_view name) const;
  bool empty() const { return counts.empty(); }
  bool operator==(const Tres&) const = default;
};

// `what` names the field in errors ("GrpTRES: 'node=x': 'x' is not a count").
Result<Tres> parse_tres(std::string_view text, std::string_view what);
// Slurm's spelling and order; cleared entries are left out. "" for none.
std::string format_tres(const Tres& tres);
// `base` with `change` applied: a count replaces, a cleared one removes.
Tres merge_tres(const Tres& base, const Tres& change);

}  // namespace trellis
