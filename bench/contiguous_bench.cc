#include "bench/contiguous_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "alloc/contiguous/box_search.h"
#include "alloc/contiguous/orientations.h"
#include "alloc/metrics.h"

namespace trellis::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct Occupancy {
  std::string name;
  NodeSet free;
};

// 50% of the nodes busy, independently at random.
NodeSet random_half_busy(const Torus& t, std::mt19937_64& rng) {
  NodeSet free(t.node_count());
  for (NodeId id = 0; id < t.node_count(); ++id)
    if (rng() & 1) free.set(id);
  return free;
}

// Random boxes (extents 1..N/4, rotation allowed) placed with the production search until 90%
// of the nodes are busy. After 50 failures in a row the largest extent drawn shrinks by one,
// so the fill always completes (single nodes fit while any node is free).
NodeSet realistic_fill(const Torus& t, std::mt19937_64& rng) {
  auto search = make_production_search(t);
  NodeSet free = NodeSet::all(t.node_count());
  const int target_free = t.node_count() / 10;
  int max_extent = std::max(1, *std::max_element(t.extents().begin(), t.extents().end()) / 4);
  int failures = 0;
  while (free.count() > target_free) {
    Shape shape;
    for (int k = 0; k < t.dims(); ++k)
      shape.push_back(
          std::uniform_int_distribution<int>(1, std::min(max_extent, t.extent(k)))(rng));
    auto choice =
        search->choose(free, orientations_for(t, Request::box(shape)), PlacementMode::kTorus);
    if (!choice) {
      if (++failures >= 50 && max_extent > 1) {
        --max_extent;
        failures = 0;
      }
      continue;
    }
    failures = 0;
    free -= choice->box.nodes(t);
  }
  return free;
}

struct Timing {
  bool ran = false;
  bool over_budget = false;
  double median_ms = 0;
  int runs = 0;
  std::optional<BoxChoice> choice;
};

Timing time_search(const BoxSearch& search, const NodeSet& free, const std::vector<Shape>& o,
                   int repeat, double budget_seconds) {
  Timing t;
  t.ran = true;
  std::vector<double> ms;
  const auto budget_start = Clock::now();
  while (static_cast<int>(ms.size()) < repeat) {
    const auto start = Clock::now();
    auto choice = search.choose(free, o, PlacementMode::kTorus);
    const auto end = Clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    t.choice = choice;
    if (ms.size() == 1 && ms[0] > budget_seconds * 1000) t.over_budget = true;
    if (std::chrono::duration<double>(end - budget_start).count() > budget_seconds) break;
  }
  std::sort(ms.begin(), ms.end());
  t.median_ms = ms[ms.size() / 2];
  t.runs = static_cast<int>(ms.size());
  return t;
}

std::string format_ms(double ms) {
  std::ostringstream s;
  if (ms < 0.01)
    s << std::fixed << std::setprecision(4) << ms;
  else if (ms < 10)
    s << std::fixed << std::setprecision(3) << ms;
  else
    s << std::fixed << std::setprecision(1) << ms;
  return s.str();
}

std::string format_cell(const Timing& t) {
  if (!t.ran) return "skipped (over budget)";
  std::string cell = format_ms(t.median_ms) + " ms";
  if (t.over_budget) cell += " (1 run, over budget)";
  return cell;
}

std::string format_ratio(const Timing& production, const Timing& other) {
  if (!other.ran || production.median_ms <= 0) return "-";
  std::ostringstream s;
  s << std::fixed << std::setprecision(0) << other.median_ms / production.median_ms << "x";
  return s.str();
}

std::string choice_text(const Torus& t, const std::optional<BoxChoice>& c) {
  return c ? c->box.describe(t) : "none";
}

}  // namespace

int run_contiguous_bench(const ContiguousBenchOptions& options, std::ostream& out) {
  const std::vector<int> sizes =
      options.quick ? std::vector<int>{8, 16} : std::vector<int>{16, 32, 48};
  const int repeat = options.repeat > 0 ? options.repeat : (options.quick ? 3 : 15);
  const std::vector<std::string> requests = {"4x4x2", "8x4x2", "32", "64"};
  const std::vector<SearchKind> kinds = {SearchKind::kProduction, SearchKind::kEmbodiment1,
                                         SearchKind::kBruteForce};
  std::map<SearchKind, bool> retired;  // over budget on a smaller machine: not run again
  int disagreements = 0;

  out << "Contiguous allocator decision time: median of up to " << repeat
      << " runs per cell, time budget " << options.budget_seconds
      << " s per search and cell; torus mode, rotation allowed.\n"
      << "emb1/prod and brute/prod: how many times faster the production search is, "
         "measured in this run.\n\n";
  out << std::left << std::setw(10) << "machine" << std::setw(18) << "occupancy" << std::setw(9)
      << "request" << std::setw(14) << "production" << std::setw(33) << "embodiment1-gen"
      << std::setw(24) << "brute force" << std::setw(11) << "emb1/prod"
      << "brute/prod\n";
  std::vector<std::string> lfb_lines;
  for (int n : sizes) {
    auto torus = Torus::make({n, n, n}, {true, true, true});
    const Torus& t = *torus;
    std::mt19937_64 rng(2026 + n);
    std::vector<Occupancy> occupancies;
    occupancies.push_back({"random 50%", random_half_busy(t, rng)});
    NodeSet filled = realistic_fill(t, rng);
    std::ostringstream fill_name;
    fill_name << "fill " << (100 * (t.node_count() - filled.count()) / t.node_count()) << "%";
    occupancies.push_back({fill_name.str(), filled});
    std::map<SearchKind, std::unique_ptr<BoxSearch>> searches;
    for (auto kind : kinds) searches[kind] = make_box_search(kind, t);
    const std::string machine = std::to_string(n) + "^3";

    for (const auto& occ : occupancies) {
      // The metric the simulator calls after every event.
      std::vector<double> lfb_ms;
      for (int i = 0; i < repeat; ++i) {
        auto start = Clock::now();
        auto box = largest_free_box(t, occ.free);
        lfb_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        if (i == 0)
          lfb_lines.push_back(machine + "  " + occ.name + ": largest free box " +
                              (box ? box->describe(t) : "none"));
      }
      std::sort(lfb_ms.begin(), lfb_ms.end());
      lfb_lines.back() += ", " + format_ms(lfb_ms[lfb_ms.size() / 2]) + " ms median";

      for (const auto& text : requests) {
        auto request = parse_request(text, true, PlacementMode::kTorus);
        const auto orientations = orientations_for(t, *request);
        std::map<SearchKind, Timing> timing;
        for (auto kind : kinds) {
          if (retired[kind]) continue;
          if (options.progress)
            std::cerr << "\r" << machine << " " << occ.name << " " << text << " " << to_string(kind)
                      << "...          " << std::flush;
          timing[kind] =
              time_search(*searches[kind], occ.free, orientations, repeat, options.budget_seconds);
          if (timing[kind].over_budget) retired[kind] = true;
        }
        const Timing& prod = timing[SearchKind::kProduction];
        for (auto kind : {SearchKind::kEmbodiment1, SearchKind::kBruteForce}) {
          if (!timing[kind].ran || timing[kind].choice == prod.choice) continue;
          ++disagreements;
          out << "DISAGREEMENT: " << to_string(kind) << " chose "
              << choice_text(t, timing[kind].choice) << ", production "
              << choice_text(t, prod.choice) << "\n";
        }
        out << std::setw(10) << machine << std::setw(18) << occ.name << std::setw(9) << text
            << std::setw(14) << format_cell(prod) << std::setw(33)
            << format_cell(timing[SearchKind::kEmbodiment1]) << std::setw(24)
            << format_cell(timing[SearchKind::kBruteForce]) << std::setw(11)
            << format_ratio(prod, timing[SearchKind::kEmbodiment1])
            << format_ratio(prod, timing[SearchKind::kBruteForce]) << "\n";
      }
    }
  }
  if (options.progress) std::cerr << "\r" << std::string(60, ' ') << "\r" << std::flush;
  out << "\nLargest free box (production search, the per-event metric):\n";
  for (const auto& line : lfb_lines) out << "  " << line << "\n";
  bool any_retired = false;
  for (const auto& [kind, r] : retired) any_retired = any_retired || r;
  if (any_retired)
    out << "\n\"over budget\": one decision took longer than the budget; that search is not "
           "run again in the remaining cells (\"skipped\").\n";
  out << (disagreements ? "\nThe searches DISAGREED on some decisions.\n"
                        : "\nAll searches chose the same box in every cell.\n");
  return disagreements ? 1 : 0;
}

}  // namespace trellis::bench
