#include "topology/machine.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace trellis {

namespace {

Result<std::vector<int>> parse_list(std::string_view text, char sep, std::string_view spec,
                                    std::string_view what) {
  std::vector<int> out;
  size_t start = 0;
  while (true) {
    size_t cut = text.find(sep, start);
    std::string_view part = text.substr(start, cut == std::string_view::npos ? cut : cut - start);
    int value = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || value < 1)
      return fail("machine spec '" + std::string(spec) + "': " + std::string(what) + " '" +
                  std::string(part) + "' is not a positive whole number");
    out.push_back(value);
    if (cut == std::string_view::npos) return out;
    start = cut + 1;
  }
}

Error spec_error(std::string_view spec, const std::string& what) {
  return fail("machine spec '" + std::string(spec) + "': " + what +
              " (expected torus:EXTENTS[:wrap=AXES], mesh:EXTENTS[:wrap=AXES], fattree:FANOUTS or "
              "flat:NODES; EXTENTS like 16x8, AXES the axes that wrap as a comma list of x y z a "
              "b c, or none; e.g. torus:16x8, mesh:27x16x24:wrap=z, mesh:8x8x8:wrap=x,y, "
              "fattree:4,4,4, flat:128)");
}

std::string canonical_torus_spec(const Torus& t) {
  bool all = true, none = true;
  for (bool w : t.wrap_flags()) (w ? none : all) = false;
  std::string out = (all ? "torus:" : "mesh:") + format_shape(t.extents());
  if (!all && !none) {
    out += ":wrap=";
    for (int a = 0; a < t.dims(); ++a)
      if (t.wraps(a)) out += axis_name(a);
  }
  return out;
}

std::string canonical_tree_spec(const FatTree& t) {
  std::string out = "fattree:";
  for (int l = 0; l < t.levels(); ++l) {
    if (l) out += ',';
    out += std::to_string(t.fanouts()[l]);
  }
  return out;
}

}  // namespace

Result<Machine> Machine::parse(std::string_view spec) {
  size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return spec_error(spec, "missing ':' after the kind");
  std::string_view kind = spec.substr(0, colon);
  std::string_view rest = spec.substr(colon + 1);
  std::string_view options;
  if (size_t c2 = rest.find(':'); c2 != std::string_view::npos) {
    options = rest.substr(c2 + 1);
    rest = rest.substr(0, c2);
  }
  if (rest.empty()) return spec_error(spec, "no size after '" + std::string(kind) + ":'");

  if (kind == "torus" || kind == "mesh") {
    auto extents = parse_list(rest, 'x', spec, "extent");
    if (!extents) return extents.error();
    std::vector<bool> wraps(extents->size(), kind == "torus");
    if (!options.empty()) {
      if (options.substr(0, 5) != "wrap=")
        return spec_error(spec, "unknown option '" + std::string(options) + "' (only wrap=AXES)");
      std::string_view axes = options.substr(5);
      std::fill(wraps.begin(), wraps.end(), false);
      if (axes != "none") {
        // A comma list of axes ("x,y"); letters may also run together ("xy").
        if (axes.empty() || axes.front() == ',' || axes.back() == ',' ||
            axes.find(",,") != std::string_view::npos)
          return spec_error(spec, "wrap= needs a comma list of axes such as x,y, or none");
        for (char c : axes) {
          if (c == ',') continue;
          int axis = static_cast<int>(std::string_view("xyzabc").find(c));
          if (axis < 0 || axis >= static_cast<int>(wraps.size()))
            return spec_error(spec, std::string("wrap axis '") + c + "' is not one of the first " +
                                        std::to_string(wraps.size()) + " of x y z a b c");
          if (wraps[axis])
            return spec_error(spec, std::string("wrap axis '") + c + "' is named twice");
          wraps[axis] = true;
        }
      }
    }
    auto torus = Torus::make(std::move(*extents), std::move(wraps));
    if (!torus) return spec_error(spec, torus.error().message);
    return from_torus(std::move(*torus));
  }
  if (!options.empty()) return spec_error(spec, std::string(kind).append(" takes no options"));
  if (kind == "fattree") {
    auto fanouts = parse_list(rest, ',', spec, "fan-out");
    if (!fanouts) return fanouts.error();
    auto tree = FatTree::make(std::move(*fanouts));
    if (!tree) return spec_error(spec, tree.error().message);
    return from_fat_tree(std::move(*tree));
  }
  if (kind == "flat") {
    auto count = parse_list(rest, ',', spec, "node count");
    if (!count) return count.error();
    if (count->size() != 1) return spec_error(spec, "flat takes one node count");
    auto tree = FatTree::make(std::move(*count));
    if (!tree) return spec_error(spec, tree.error().message);
    Machine m = from_fat_tree(std::move(*tree));
    m.kind_ = Kind::kFlat;
    m.spec_ = "flat:" + std::to_string(m.node_count());
    return m;
  }
  return spec_error(spec, "unknown kind '" + std::string(kind) + "'");
}

Machine Machine::from_torus(Torus torus) {
  Machine m;
  m.kind_ = Kind::kTorus;
  m.spec_ = canonical_torus_spec(torus);
  m.torus_ = std::move(torus);
  return m;
}

Machine Machine::from_fat_tree(FatTree tree) {
  Machine m;
  m.kind_ = Kind::kFatTree;
  m.spec_ = canonical_tree_spec(tree);
  m.tree_ = std::move(tree);
  return m;
}

int Machine::node_count() const {
  return torus_ ? torus_->node_count() : tree_->node_count();
}

int Machine::hop_distance(NodeId a, NodeId b) const {
  return torus_ ? torus_->hop_distance(a, b) : tree_->hop_count(a, b);
}

std::string Machine::describe() const {
  if (kind_ == Kind::kFlat) return "flat, " + std::to_string(node_count()) + " nodes";
  if (torus_) return torus_->describe() + ", " + std::to_string(node_count()) + " nodes";
  return tree_->describe();
}

}  // namespace trellis
