#include "bench/compare_alloc.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <random>

#include "alloc/locality_metrics.h"
#include "alloc/metrics.h"
#include "topology/curve.h"

namespace trellis {

namespace {

// Uniform in [0, 1) from 53 random bits (std:: distributions differ between libraries).
double unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace

std::vector<CompareJob> random_job_sequence(int node_count, int jobs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int largest = std::max(1, node_count / 8);
  std::vector<CompareJob> seq(jobs);
  double total = 0;
  for (auto& job : seq) {
    double size = std::exp(unit(rng) * std::log(static_cast<double>(largest)));
    int nodes = std::clamp(static_cast<int>(std::lround(size)), 1, largest);
    if (rng() % 2 == 0) nodes = std::min<int>(largest, std::bit_ceil(static_cast<unsigned>(nodes)));
    job.nodes = nodes;
    total += nodes;
  }
  // A job lives a uniform 1..L arrivals; L makes the expected load about 85% of the machine.
  const double mean = jobs > 0 ? total / jobs : 1;
  const int life = std::max(2, static_cast<int>(std::lround(2 * 0.85 * node_count / mean)));
  for (int i = 0; i < jobs; ++i) seq[i].departs_before = i + 1 + static_cast<int>(rng() % life);
  return seq;
}

Result<std::vector<AllocatorComparison>> compare_allocators(
    const Machine& machine, const CompareAllocOptions& options,
    const std::function<void(const std::string&)>& progress) {
  const auto& registry = AllocatorRegistry::builtin();
  std::vector<std::unique_ptr<Allocator>> allocators;
  if (options.allocators.empty()) {
    for (const auto& info : registry.all())
      if (auto a = registry.create(info.name, machine)) allocators.push_back(std::move(*a));
  } else {
    for (const auto& name : options.allocators) {
      auto a = registry.create(name, machine);
      if (!a) return fail("--alloc " + name + ": " + a.error().message);
      allocators.push_back(std::move(*a));
    }
  }
  const Curve curve = machine.torus() ? *Curve::make(CurveKind::kSnake, *machine.torus())
                                      : Curve::identity(machine.node_count());
  const std::vector<CompareJob> jobs =
      random_job_sequence(machine.node_count(), options.jobs, options.seed);
  std::vector<AllocatorComparison> rows;
  for (const auto& allocator : allocators) {
    if (progress) progress(std::string(allocator->name()));
    AllocatorComparison row;
    row.allocator = std::string(allocator->name());
    NodeSet free = NodeSet::all(machine.node_count());
    std::vector<std::pair<int, NodeSet>> running;  // (departs_before, nodes)
    std::vector<double> micros;
    double hops = 0, span = 0, switches = 0, runs = 0;
    for (int i = 0; i < static_cast<int>(jobs.size()); ++i) {
      for (auto it = running.begin(); it != running.end();) {
        if (it->first <= i) {
          free |= it->second;
          it = running.erase(it);
        } else {
          ++it;
        }
      }
      Request request = Request::count(jobs[i].nodes, PlacementMode::kNonContiguous);
      if (!allocator->check(request)) {
        ++row.refused;
        continue;
      }
      auto start = std::chrono::steady_clock::now();
      auto placement = allocator->allocate(free, request);
      auto stop = std::chrono::steady_clock::now();
      micros.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
      if (!placement) {
        ++row.refused;
        continue;
      }
      const NodeSet& nodes = placement->nodes;
      ++row.placed;
      hops += average_pairwise_hops(machine, nodes);
      span += curve_span(curve, nodes);
      runs += contiguous_runs(curve, nodes);
      if (machine.fat_tree()) switches += leaf_switches_spanned(*machine.fat_tree(), nodes);
      free -= nodes;
      running.emplace_back(jobs[i].departs_before, nodes);
    }
    if (row.placed > 0) {
      row.mean_hops = hops / row.placed;
      row.mean_span = span / row.placed;
      row.mean_runs = runs / row.placed;
      if (machine.fat_tree()) row.mean_switches = switches / row.placed;
    }
    if (!micros.empty()) {
      std::nth_element(micros.begin(), micros.begin() + micros.size() / 2, micros.end());
      row.median_decision_us = micros[micros.size() / 2];
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void print_comparison(std::ostream& out, const Machine& machine, const CompareAllocOptions& options,
                      const std::vector<AllocatorComparison>& rows) {
  out << "machine: " << machine.spec() << " (" << machine.describe() << "), " << options.jobs
      << " jobs, seed " << options.seed << "\n";
  out << "span and runs along the " << (machine.torus() ? "snake" : "leaf (id)")
      << " order; means over placed jobs\n\n";
  out << std::left << std::setw(26) << "allocator" << std::right << std::setw(7) << "placed"
      << std::setw(8) << "refused" << std::setw(10) << "avg hops" << std::setw(10) << "span"
      << std::setw(10) << "switches" << std::setw(8) << "runs" << std::setw(12) << "median us"
      << "\n";
  out << std::fixed;
  for (const auto& r : rows) {
    out << std::left << std::setw(26) << r.allocator << std::right << std::setw(7) << r.placed
        << std::setw(8) << r.refused << std::setw(10) << std::setprecision(2) << r.mean_hops
        << std::setw(10) << std::setprecision(1) << r.mean_span;
    if (r.mean_switches < 0) {
      out << std::setw(10) << "-";
    } else {
      out << std::setw(10) << std::setprecision(1) << r.mean_switches;
    }
    out << std::setw(8) << std::setprecision(1) << r.mean_runs << std::setw(12)
        << std::setprecision(1) << r.median_decision_us << "\n";
  }
}

}  // namespace trellis
