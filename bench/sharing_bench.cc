#include "bench/sharing_bench.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "alloc/node_pool.h"
#include "alloc/node_sharing.h"
#include "alloc/registry.h"
#include "core/resource_request.h"
#include "topology/machine.h"

namespace trellis::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kNodeType = "sockets=2,cores=128,numa=8,mem=512G,gpus=8";

// This process's resident memory, in KiB (/proc/self/status VmRSS), or -1.
long long resident_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  return -1;
}

// The stream's jobs, drawn from the mix of the header; `whole` asks every job for whole nodes
// (the reference: the same node counts, no demand).
class JobStream {
 public:
  JobStream(const NodeInventory& node, uint32_t seed) : node_(node), random_(seed) {}

  Request next(bool whole) {
    const int kind = std::uniform_int_distribution<int>(0, 99)(random_);
    ResourceRequest asked;
    int nodes = 1;
    if (kind < 50) {
      asked.cpus_per_task = 1 << std::uniform_int_distribution<int>(0, 4)(random_);
      asked.mem_per_cpu_mb = 2048;
    } else if (kind < 70) {
      asked.gpus_per_node = std::uniform_int_distribution<int>(1, 4)(random_);
      asked.cpus_per_gpu = 16;
      asked.mem_per_gpu_mb = 32 * 1024;
    } else {
      nodes = kind < 90 ? std::uniform_int_distribution<int>(1, 8)(random_)
                        : std::uniform_int_distribution<int>(16, 64)(random_);
      asked.sharing = NodeSharing::kExclusive;
    }
    Request request = Request::count(nodes, PlacementMode::kNonContiguous);
    if (!whole) {
      Result<NodeDemand> demand = node_demand(asked, 1, nodes, node_, 0);
      request.demand = std::make_shared<const NodeDemand>(*demand);
    }
    return request;
  }

 private:
  NodeInventory node_;
  std::mt19937 random_;
};

struct Timings {
  std::vector<double> us;  // per decision
  int placed = 0;
  // Placements that gave what was held already, or a pool whose free cores disagree with what
  // was taken: either is a bug, and the run fails.
  std::string broken;
  double median() { return percentile(0.5); }
  double percentile(double q) {
    if (us.empty()) return 0;
    std::sort(us.begin(), us.end());
    return us[std::min(us.size() - 1, static_cast<size_t>(q * static_cast<double>(us.size())))];
  }
};

// Shared nodes: the pool, filled to 70% of its cores, then `decisions` timed placements.
Timings time_shared(const Machine& machine, const Allocator& inner, const NodeInventory& node,
                    int decisions, long long& pool_kib) {
  const long long before = resident_kib();
  NodePool pool({node}, {}, machine.node_count());
  pool_kib = resident_kib() - before;
  NodeSharingAllocator sharing(machine, inner, pool);
  JobStream stream(node, 1);
  std::mt19937 ends(2);
  std::vector<std::vector<NodeGrant>> running;
  std::string broken;
  const int64_t cores = int64_t{node.cores()} * machine.node_count();
  int64_t held = 0;  // cores given out
  auto start = [&](const Placement& placed) {
    for (const NodeGrant& g : placed.grants) {
      if (Status taken = pool.take(g); !taken) {
        broken = "a placement gave what was held: " + taken.error().message;
        continue;
      }
      held += static_cast<int64_t>(g.cores.size());
    }
    running.push_back(placed.grants);
  };
  for (int tries = 0; held < cores * 7 / 10 && tries < 10 * machine.node_count(); ++tries)
    if (Result<Placement> placed = sharing.allocate(pool.open_nodes(), stream.next(false)); placed)
      start(*placed);
  Timings t;
  for (int i = 0; i < decisions; ++i) {
    Request request = stream.next(false);
    const NodeSet& free = pool.open_nodes();
    Clock::time_point began = Clock::now();
    Result<Placement> placed = sharing.allocate(free, request);
    t.us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - began).count());
    if (placed) {
      start(*placed);
      ++t.placed;
    }
    if (!running.empty()) {
      size_t at = std::uniform_int_distribution<size_t>(0, running.size() - 1)(ends);
      for (const NodeGrant& g : running[at]) {
        pool.give_back(g);
        held -= static_cast<int64_t>(g.cores.size());
      }
      running[at] = std::move(running.back());
      running.pop_back();
    }
  }
  if (broken.empty() && pool.totals().free_cores != cores - held)
    broken = "the pool has " + std::to_string(pool.totals().free_cores) + " free cores, " +
             std::to_string(cores - held) + " expected";
  t.broken = broken;
  return t;
}

// Whole nodes: the machine's allocator on a free set filled to 70% of its nodes.
Timings time_whole(const Machine& machine, const Allocator& inner, const NodeInventory& node,
                   int decisions) {
  JobStream stream(node, 1);
  std::mt19937 ends(2);
  NodeSet free = NodeSet::all(machine.node_count());
  std::vector<NodeSet> running;
  const int n = machine.node_count();
  for (int tries = 0; free.count() > n * 3 / 10 && tries < 10 * n; ++tries)
    if (Result<Placement> placed = inner.allocate(free, stream.next(true)); placed) {
      free -= placed->nodes;
      running.push_back(placed->nodes);
    }
  Timings t;
  for (int i = 0; i < decisions; ++i) {
    Request request = stream.next(true);
    Clock::time_point began = Clock::now();
    Result<Placement> placed = inner.allocate(free, request);
    t.us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - began).count());
    if (placed) {
      free -= placed->nodes;
      running.push_back(placed->nodes);
      ++t.placed;
    }
    if (!running.empty()) {
      size_t at = std::uniform_int_distribution<size_t>(0, running.size() - 1)(ends);
      free |= running[at];
      running[at] = std::move(running.back());
      running.pop_back();
    }
  }
  return t;
}

}  // namespace

int run_sharing_bench(const SharingBenchOptions& options, std::ostream& out) {
  const int nodes = options.quick ? 1024 : 16384;
  const int decisions = options.decisions > 0 ? options.decisions : options.quick ? 2000 : 20000;
  Result<Machine> machine = Machine::parse("flat:" + std::to_string(nodes));
  Result<NodeInventory> node = parse_node_inventory(kNodeType);
  if (!machine || !node) {
    out << "trellis bench sharing: cannot build the machine\n";
    return 1;
  }
  const std::string allocator_name = default_allocator_for(*machine);
  Result<std::unique_ptr<Allocator>> inner =
      AllocatorRegistry::builtin().create(allocator_name, *machine);
  if (!inner) {
    out << "trellis bench sharing: " << inner.error().message << "\n";
    return 1;
  }
  long long pool_kib = 0;
  Timings shared = time_shared(*machine, **inner, *node, decisions, pool_kib);
  Timings whole = time_whole(*machine, **inner, *node, decisions);
  out << "trellis bench sharing: " << machine->spec() << " of " << kNodeType << ", " << decisions
      << " decisions each at 70% occupancy, allocator " << allocator_name << "\n\n";
  out << std::left << std::setw(30) << "placement" << std::right << std::setw(12) << "median us"
      << std::setw(12) << "p99 us" << std::setw(14) << "decisions/s" << std::setw(10) << "placed"
      << "\n";
  auto row = [&](const std::string& name, Timings& t) {
    const double median = t.median();
    out << std::left << std::setw(30) << name << std::right << std::fixed << std::setprecision(1)
        << std::setw(12) << median << std::setw(12) << t.percentile(0.99) << std::setw(14)
        << std::setprecision(0) << (median > 0 ? 1e6 / median : 0) << std::setw(10) << t.placed
        << "\n";
  };
  row("shared (cores, memory, GPUs)", shared);
  row("whole nodes (today's)", whole);
  const double ratio = whole.median() > 0 ? shared.median() / whole.median() : 0;
  out << "\nshared / whole median: " << std::setprecision(2) << ratio
      << "x; goal: shared median under 1000 us (it is " << std::setprecision(1) << shared.median()
      << ")\n";
  out << "pool state for " << nodes << " nodes: " << std::setprecision(1)
      << static_cast<double>(pool_kib) / 1024 << " MiB resident (goal: the controller's "
      << "memory for this inventory under 1 GiB)\n";
  if (!shared.broken.empty()) {
    out << "FAILED: " << shared.broken << "\n";
    return 1;
  }
  return 0;
}

}  // namespace trellis::bench
