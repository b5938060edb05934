#include "topology/routing.h"

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

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
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
  auto parts = split(text, ',');
  RoutingRules rules = *with_table("A");
  size_t first = 0;
  if (!parts.empty() && parts[0].find('=') == std::string_view::npos) {
    std::string_view preset = parts[0];
    first = 1;
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
  }
  for (size_t i = first; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    size_t eq = part.find('=');
    if (eq == std::string_view::npos)
      return fail("routing rules: '" + std::string(part) + "' is not key=value");
    std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    auto bad = [&](std::string_view expected) {
      return fail("routing rules: " + std::string(key) + "='" + std::string(value) +
                  "' (expected " + std::string(expected) + ")");
    };
    if (key == "table") {
      auto t = with_table(value);
      if (!t) return fail("routing rules: " + t.error().message);
      rules.table = t->table;
      rules.phases = t->phases;
    } else if (key == "phase") {
      if (value == "earliest") {
        rules.phase_choice = PhaseChoice::kEarliest;
      } else if (value == "latest") {
        rules.phase_choice = PhaseChoice::kLatest;
      } else {
        return bad("earliest or latest");
      }
    } else if (key == "dateline") {
      if (value == "through") {
        rules.dateline = Dateline::kThrough;
      } else if (value == "boundary") {
        rules.dateline = Dateline::kBoundary;
      } else if (value == "link") {
        rules.dateline = Dateline::kLink;
      } else if (value == "none") {
        rules.dateline = Dateline::kNone;
      } else {
        return bad("through, boundary, link or none");
      }
    } else if (key == "channels") {
      if (value == "keep") {
        rules.keep_channel_on_mesh_axes = true;
      } else if (value == "free") {
        rules.keep_channel_on_mesh_axes = false;
      } else {
        return bad("keep or free");
      }
    } else {
      return fail("routing rules: unknown key '" + std::string(key) +
                  "' (expected table, phase, dateline or channels)");
    }
  }
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
