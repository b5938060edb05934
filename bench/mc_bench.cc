#include "bench/mc_bench.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <random>
#include <tuple>

#include "alloc/mc/mc_allocator.h"
#include "topology/curve.h"

namespace trellis::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Digest 4.10's algorithm, written for clarity: every free centre, every free node.
NodeSet naive_mc(const Torus& t, const Curve& snake, const NodeSet& free, int k, bool wrap) {
  std::vector<NodeId> members = free.to_vector();
  std::vector<Coords> coords;
  for (NodeId id : members) coords.push_back(t.coords(id));
  auto axis = [&](int a, int u, int v) {
    int d = std::abs(u - v);
    return wrap && t.wraps(a) ? std::min(d, t.extent(a) - d) : d;
  };
  auto linf = [&](const Coords& p, const Coords& q) {
    int d = 0;
    for (int a = 0; a < t.dims(); ++a) d = std::max(d, axis(a, p[a], q[a]));
    return d;
  };
  long best_cost = -1;
  int best_rank = 0;
  size_t best = 0;
  std::vector<int> shells;
  for (size_t c = 0; c < members.size(); ++c) {
    shells.assign(64, 0);
    for (const Coords& p : coords) ++shells[linf(coords[c], p)];
    long cost = 0;
    int need = k;
    for (int r = 0; need > 0; ++r) {
      int take = std::min(shells[r], need);
      cost += static_cast<long>(r) * take;
      need -= take;
    }
    int rank = snake.rank_of(members[c]);
    if (best_cost < 0 || cost < best_cost || (cost == best_cost && rank < best_rank)) {
      best_cost = cost;
      best_rank = rank;
      best = c;
    }
  }
  std::vector<std::tuple<int, int, int, NodeId>> order;
  for (size_t i = 0; i < members.size(); ++i) {
    int l1 = 0;
    for (int a = 0; a < t.dims(); ++a) l1 += axis(a, coords[best][a], coords[i][a]);
    order.emplace_back(linf(coords[best], coords[i]), l1, snake.rank_of(members[i]), members[i]);
  }
  std::sort(order.begin(), order.end());
  NodeSet chosen(free.size());
  for (int i = 0; i < k; ++i) chosen.set(std::get<3>(order[i]));
  return chosen;
}

template <typename F>
double median_us(int repeat, F&& decide) {
  std::vector<double> us;
  for (int i = 0; i < repeat; ++i) {
    auto start = Clock::now();
    decide();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

}  // namespace

int run_mc_bench(const McBenchOptions& options, std::ostream& out) {
  const std::string spec = options.quick ? "mesh:12x8x8:wrap=z" : "mesh:27x16x24:wrap=z";
  const int repeat = options.repeat > 0 ? options.repeat : options.quick ? 3 : 5;
  const Machine machine = *Machine::parse(spec);
  const Torus& t = *machine.torus();
  const Curve snake = *Curve::make(CurveKind::kSnake, t);
  out << "MC1x1 decision time on " << spec << " (" << t.node_count() << " nodes), median of "
      << repeat << " decisions\n\n";
  out << std::left << std::setw(8) << "busy" << std::right << std::setw(6) << "job" << std::setw(7)
      << "wrap" << std::setw(14) << "production us" << std::setw(12) << "naive us" << std::setw(10)
      << "speed-up" << std::setw(8) << "same"
      << "\n";
  out << std::fixed;
  int disagreements = 0;
  std::mt19937_64 rng(17);
  for (int busy_percent : {50, 90}) {
    NodeSet free(t.node_count());
    for (NodeId id = 0; id < t.node_count(); ++id)
      if (static_cast<int>(rng() % 100) >= busy_percent) free.set(id);
    for (int k : {27, 100, 1000}) {
      if (k > free.count()) continue;
      for (bool wrap : {false, true}) {
        if (options.progress)
          std::cerr << "\rbusy " << busy_percent << "% job " << k << (wrap ? " wrap" : "")
                    << "...\033[K" << std::flush;
        Mc1x1Allocator mc(machine, wrap);
        const Request request = Request::count(k, PlacementMode::kNonContiguous);
        NodeSet production, reference;
        double fast = median_us(repeat, [&] { production = mc.allocate(free, request)->nodes; });
        double slow = median_us(repeat, [&] { reference = naive_mc(t, snake, free, k, wrap); });
        bool same = production == reference;
        disagreements += !same;
        out << std::left << std::setw(8) << (std::to_string(busy_percent) + "%") << std::right
            << std::setw(6) << k << std::setw(7) << (wrap ? "yes" : "no") << std::setw(14)
            << std::setprecision(0) << fast << std::setw(12) << slow << std::setw(9)
            << std::setprecision(1) << slow / fast << "x" << std::setw(8) << (same ? "yes" : "NO")
            << "\n";
      }
    }
  }
  if (options.progress) std::cerr << "\r\033[K" << std::flush;
  return disagreements == 0 ? 0 : 1;
}

}  // namespace trellis::bench
