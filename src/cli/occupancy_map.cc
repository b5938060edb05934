#include "cli/occupancy_map.h"

#include <map>
#include <sstream>

#include "core/hostlist.h"

namespace trellis::cli {
namespace {

constexpr std::string_view kJobLetters =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

// Planes of a torus: x across, y down, every further axis a separate plane.
void draw_torus(std::ostream& out, const Torus& torus, const std::vector<char>& cell) {
  const int nx = torus.extent(0);
  const int ny = torus.dims() > 1 ? torus.extent(1) : 1;
  int planes = 1;
  for (int axis = 2; axis < torus.dims(); ++axis) planes *= torus.extent(axis);
  // Planes side by side, as many as fit in about 100 columns.
  const int per_row = std::max(1, std::min(planes, 100 / (nx + 3)));
  for (int first = 0; first < planes; first += per_row) {
    const int last = std::min(planes, first + per_row);
    for (int p = first; p < last; ++p) {
      std::string title = torus.dims() > 2 ? "z=" + std::to_string(p) : "";
      if (torus.dims() > 3) title = "plane " + std::to_string(p);
      title.resize(static_cast<size_t>(nx + 3), ' ');
      out << title;
    }
    out << "\n";
    for (int y = 0; y < ny; ++y) {
      for (int p = first; p < last; ++p) {
        Coords c{};
        for (int axis = 2, rest = p; axis < torus.dims(); ++axis) {
          c[axis] = rest % torus.extent(axis);
          rest /= torus.extent(axis);
        }
        c[1] = y;
        for (int x = 0; x < nx; ++x) {
          c[0] = x;
          out << cell[static_cast<size_t>(torus.id(c))];
        }
        out << "   ";
      }
      out << "\n";
    }
    out << "\n";
  }
}

}  // namespace

std::string occupancy_map(const Machine& machine, const std::vector<StoredNode>& nodes,
                          const std::vector<StoredJob>& jobs) {
  const int n = machine.node_count();
  std::map<JobId, char> letter;
  for (const StoredJob& job : jobs) {
    if (job.nodes.empty() || is_final(job.state)) continue;
    size_t index = letter.size();
    letter[job.id] = index < kJobLetters.size() ? kJobLetters[index] : '*';
  }
  std::vector<char> cell(static_cast<size_t>(n), '?');
  int idle = 0, busy = 0, down = 0;
  for (const StoredNode& node : nodes) {
    if (node.id < 0 || node.id >= n) continue;
    char c = '.';
    if (!node.jobs.empty() && letter.count(node.jobs.front())) {
      c = letter[node.jobs.front()];
      ++busy;
    } else if (node.drained) {
      c = 'x';
      ++down;
    } else if (!node.up) {
      c = '#';
      ++down;
    } else {
      ++idle;
    }
    cell[static_cast<size_t>(node.id)] = c;
  }

  std::ostringstream out;
  out << machine.spec() << ": " << n << " nodes, " << busy << " allocated, " << idle << " idle, "
      << down << " down or drained\n\n";
  if (const Torus* torus = machine.torus()) {
    draw_torus(out, *torus, cell);
  } else {
    const FatTree* tree = machine.fat_tree();
    const int per_row = tree && tree->levels() > 0 ? tree->nodes_under(1) : 64;
    for (int first = 0; first < n; first += per_row) {
      out << (tree ? "leaf " + std::to_string(first / per_row) + ": " : "");
      for (int id = first; id < std::min(n, first + per_row); ++id) out << cell[id];
      out << "\n";
    }
    out << "\n";
  }
  out << "legend: . idle   # down   x drained\n";
  for (const StoredJob& job : jobs) {
    auto it = letter.find(job.id);
    if (it == letter.end()) continue;
    out << "  " << it->second << "  job " << job.id << " (" << job.user << ", " << job.name << ", "
        << job.nodes.size() << " nodes";
    if (!job.box_extents.empty()) out << ", box " << format_shape(job.box_extents);
    out << ")  " << format_hostlist(NodeSet::of(n, job.nodes)) << "\n";
  }
  return out.str();
}

}  // namespace trellis::cli
