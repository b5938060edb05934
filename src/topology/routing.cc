#include "topology/routing.h"

#include <initializer_list>
#include <string>
#include <utility>

#include "core/key_value.h"

namespace trellis {

std::string direction_name(int dir) {
  return std::string(1, dir % 2 == 0 ? '+' : '-') + "xyz"[dir / 2];
}

NodeId neighbour(const Torus& torus, NodeId node, int dir, bool* crosses_wrap) {
  const int axis = dir / 2;
  if (crosses_wrap) *crosses_wrap = false;
  if (axis >= torus.dims() || torus.extent(axis) < 2) return -1;
  const int extent = torus.extent(axis);
  Coords c = torus.coords(node);
  int v = c[axis] + (dir % 2 == 0 ? 1 : -1);
  if (v < 0 || v >= extent) {
    if (!torus.wraps(axis)) return -1;
    v = (v + extent) % extent;
    if (crosses_wrap) *crosses_wrap = true;
  }
  c[axis] = v;
  return torus.id(c);
}

int successors(const Torus& torus, const RoutingRules& rules, const WalkState& from, int dir,
               std::array<WalkState, 2>& out) {
  if (from.last != kInjected && dir == opposite(from.last)) return 0;  // no U-turns
  const int phases = static_cast<int>(rules.phases.size());
  int phase = -1;
  for (int p = from.phase; p < phases; ++p) {
    if (!rules.phases[p][dir]) continue;
    phase = p;
    if (rules.phase_choice == RoutingRules::PhaseChoice::kEarliest) break;
  }
  if (phase < 0) return 0;
  bool crosses_wrap = false;
  const NodeId next = neighbour(torus, from.node, dir, &crosses_wrap);
  if (next < 0) return 0;
  const int axis = dir / 2;
  bool to_channel_one = false;
  if (torus.wraps(axis)) {
    const bool on_last_plane = torus.coords(from.node)[axis] == torus.extent(axis) - 1;
    switch (rules.dateline) {
      case RoutingRules::Dateline::kThrough:
        to_channel_one = on_last_plane && from.last != kInjected && from.last / 2 == axis;
        break;
      case RoutingRules::Dateline::kBoundary:
        to_channel_one = on_last_plane;
        break;
      case RoutingRules::Dateline::kLink:
        to_channel_one = crosses_wrap;
        break;
      case RoutingRules::Dateline::kNone:
        break;
    }
  }
  if (to_channel_one && from.vc == 1) return 0;  // channel 1 may not pass the dateline again
  if (!rules.keep_channel_on_mesh_axes && !torus.wraps(axis)) {
    out[0] = {next, phase, 0, dir};
    out[1] = {next, phase, 1, dir};
    return 2;
  }
  out[0] = {next, phase, to_channel_one ? 1 : from.vc, dir};
  return 1;
}

namespace {

using DirSet = std::array<bool, kDirections>;

DirSet dirs(std::initializer_list<int> list) {
  DirSet s{};
  for (int d : list) s[d] = true;
  return s;
}

constexpr int kPx = 0, kMx = 1, kPy = 2, kMy = 3, kPz = 4, kMz = 5;

// Sets `field` from the value of `key` when given, which must be one of `choices`'s names.
template <typename T>
Status set_choice(const KeyValueOptions& options, const std::string& key,
                  std::initializer_list<std::pair<std::string_view, T>> choices, T& field) {
  auto value = options.get(key);
  if (!value) return Ok{};
  std::string expected;
  size_t i = 0;
  for (const auto& [name, choice] : choices) {
    if (name == *value) {
      field = choice;
      return Ok{};
    }
    expected += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(name);
    ++i;
  }
  return fail("routing rules: " + key + "='" + *value + "' (expected " + expected + ")");
}

}  // namespace

Result<RoutingRules> RoutingRules::with_table(std::string_view name) {
  RoutingRules r;
  r.table = std::string(name);
  // Table A is seed 004's default; B flips the y signs, C the z signs, D both (digest 4.4).
  int py = kPy, my = kMy, pz = kPz, mz = kMz;
  if (name == "B" || name == "D") std::swap(py, my);
  if (name == "C" || name == "D") std::swap(pz, mz);
  if (name == "A" || name == "B" || name == "C" || name == "D") {
    r.phases = {dirs({kPx, kMx, py, pz}), dirs({my, pz}), dirs({mz})};
  } else if (name == "dor") {
    r.phases = {dirs({kPx, kMx}), dirs({kPy, kMy}), dirs({kPz, kMz})};
  } else {
    return fail("unknown phase table '" + std::string(name) + "' (expected A, B, C, D or dor)");
  }
  return r;
}

Result<RoutingRules> RoutingRules::parse(std::string_view text) {
  // A leading part without '=' names the preset; the rest are key=value overrides.
  size_t comma = text.find(',');
  std::string_view preset = "recommended", overrides = text;
  if (text.substr(0, comma).find('=') == std::string_view::npos) {
    preset = text.substr(0, comma);
    overrides = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  RoutingRules rules = *with_table("A");
  if (preset == "recommended") {
    // the defaults
  } else if (preset == "literal" || preset == "prior-art") {
    rules.phase_choice = PhaseChoice::kEarliest;
    rules.dateline = Dateline::kThrough;
    rules.keep_channel_on_mesh_axes = preset == "literal";
  } else if (preset == "dor") {
    rules = *with_table("dor");
    rules.phase_choice = PhaseChoice::kEarliest;
  } else {
    return fail("routing rules: unknown preset '" + std::string(preset) +
                "' (expected recommended, literal, prior-art or dor)");
  }
  KeyValueOptions options("routing rules");
  if (auto ok = options.add_list(overrides); !ok) return ok.error();
  if (auto ok = options.only({"table", "phase", "dateline", "channels"}, preset); !ok)
    return ok.error();
  if (auto name = options.get("table")) {
    auto t = with_table(*name);
    if (!t) return fail("routing rules: " + t.error().message);
    rules.table = t->table;
    rules.phases = t->phases;
  }
  Status ok = set_choice<PhaseChoice>(
      options, "phase", {{"earliest", PhaseChoice::kEarliest}, {"latest", PhaseChoice::kLatest}},
      rules.phase_choice);
  if (ok)
    ok = set_choice<Dateline>(options, "dateline",
                              {{"through", Dateline::kThrough},
                               {"boundary", Dateline::kBoundary},
                               {"link", Dateline::kLink},
                               {"none", Dateline::kNone}},
                              rules.dateline);
  if (ok)
    ok = set_choice<bool>(options, "channels", {{"keep", true}, {"free", false}},
                          rules.keep_channel_on_mesh_axes);
  if (!ok) return ok.error();
  return rules;
}

std::string RoutingRules::describe() const {
  static const char* kDatelines[] = {"through", "boundary", "link", "none"};
  std::string out = "table=" + table + " (";
  for (size_t p = 0; p < phases.size(); ++p) {
    if (p > 0) out += " | ";
    bool first = true;
    for (int d = 0; d < kDirections; ++d)
      if (phases[p][d]) {
        if (!first) out += ' ';
        out += direction_name(d);
        first = false;
      }
  }
  out += ") phase=";
  out += phase_choice == PhaseChoice::kEarliest ? "earliest" : "latest";
  out += " dateline=";
  out += kDatelines[static_cast<int>(dateline)];
  out += " channels=";
  out += keep_channel_on_mesh_axes ? "keep" : "free";
  return out;
}

}  // namespace trellis
