#include "sim/runtime_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "alloc/metrics.h"
#include "alloc/most_compact.h"
#include "topology/link_load.h"

namespace trellis {
namespace {

class TraceModel final : public RuntimeModel {
 public:
  bool measures() const override { return false; }
  NetworkCost started(const Job&, const NodeSet&) override { return {}; }
};

// The most compact allocation's figures by size, computed once per size.
class CompactReference {
 public:
  struct Figures {
    double hops = 0;
    double max_link_load = 0;
  };
  explicit CompactReference(const Machine& machine) : machine_(machine) {}
  const Figures& of(int nodes) {
    auto [at, inserted] = by_size_.try_emplace(nodes);
    if (inserted) {
      NodeSet compact = most_compact_nodes(machine_, nodes);
      at->second.hops = average_pairwise_hops(machine_, compact);
      at->second.max_link_load = max_link_load(machine_, all_to_all_link_loads(machine_, compact));
    }
    return at->second;
  }

 private:
  const Machine& machine_;
  std::map<int, Figures> by_size_;
};

// A job's own figures on `nodes`, whose traffic gives `loads`.
NetworkCost own_cost(const Machine& machine, const NodeSet& nodes,
                     const std::vector<LinkLoad>& loads, double* hops) {
  NetworkCost cost;
  const double n = nodes.count();
  cost.average_hops = average_pairwise_hops(machine, nodes);
  *hops = cost.average_hops;
  cost.hop_bytes = *hops * n * (n - 1);  // 1 MiB per ordered pair
  cost.max_link_load = max_link_load(machine, loads);
  return cost;
}

// A uniform draw in [-1, 1] fixed by (seed, job): splitmix64 of the pair.
double job_draw(uint64_t seed, JobId job) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(job) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 * 2 - 1;
}

class HopBytesModel final : public RuntimeModel {
 public:
  HopBytesModel(const Machine& machine, double a, double b, double c, uint64_t seed)
      : machine_(machine), reference_(machine), links_(machine), a_(a), b_(b), c_(c), seed_(seed) {}

  NetworkCost started(const Job& job, const NodeSet& nodes) override {
    double hops = 0;
    NetworkCost cost = own_cost(machine_, nodes, links_.loads(nodes), &hops);
    const double compact = reference_.of(nodes.count()).hops;
    const double excess = compact > 0 ? std::max(0.0, hops / compact - 1) : 0;
    const double exponent = b_ + c_ * job_draw(seed_, job.id);
    cost.inflation = excess > 0 ? 1 + a_ * std::pow(excess, exponent) : 1;
    return cost;
  }

 private:
  const Machine& machine_;
  CompactReference reference_;
  LinkLoadCalculator links_;
  double a_, b_, c_;
  uint64_t seed_;
};

class CongestionModel final : public RuntimeModel {
 public:
  CongestionModel(const Machine& machine, double comm)
      : machine_(machine),
        reference_(machine),
        links_(machine),
        comm_(comm),
        traffic_(static_cast<size_t>(link_id_bound(machine)), 0) {}

  NetworkCost started(const Job& job, const NodeSet& nodes) override {
    double hops = 0;
    const std::vector<LinkLoad>& loads = links_.loads(nodes);
    NetworkCost cost = own_cost(machine_, nodes, loads, &hops);
    // Every node injects one unit in all, split over its n - 1 destinations: a large job's
    // messages are smaller, so neighbours compare by bandwidth, not by message counts.
    const double weight = nodes.count() > 1 ? 1.0 / (nodes.count() - 1) : 0;
    double shared = 0;  // the most loaded of its links, everyone's traffic counted
    for (const LinkLoad& l : loads) {
      traffic_[l.link] += weight * static_cast<double>(l.messages);
      shared =
          std::max(shared, traffic_[l.link] / static_cast<double>(link_capacity(machine_, l.link)));
    }
    const double compact = weight * reference_.of(nodes.count()).max_link_load;
    if (compact > 0) cost.inflation = std::max(1.0, (1 - comm_) + comm_ * shared / compact);
    size_t slot = held_.size();
    if (free_slots_.empty()) {
      held_.emplace_back();
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
    }
    held_[slot].weight = weight;
    held_[slot].loads.assign(loads.begin(), loads.end());  // reuses the slot's capacity
    slot_of_[job.id] = slot;
    return cost;
  }

  void ended(JobId id) override {
    auto it = slot_of_.find(id);
    if (it == slot_of_.end()) return;
    const Held& held = held_[it->second];
    for (const LinkLoad& l : held.loads)
      traffic_[l.link] -= held.weight * static_cast<double>(l.messages);
    free_slots_.push_back(it->second);
    slot_of_.erase(it);
  }

 private:
  const Machine& machine_;
  CompactReference reference_;
  LinkLoadCalculator links_;
  double comm_;
  std::vector<double> traffic_;  // by link id: the running jobs' traffic, weighted
  // The traffic each running job put on the links, to take off when it ends. Slots are reused, so
  // a long run does not allocate a fresh vector per job.
  struct Held {
    double weight = 0;
    std::vector<LinkLoad> loads;
  };
  std::vector<Held> held_;
  std::vector<size_t> free_slots_;
  std::unordered_map<JobId, size_t> slot_of_;
};

RuntimeModelRegistry make_builtin() {
  RuntimeModelRegistry registry;
  registry.add({"trace", "run times as the trace recorded them, wherever a job lands (default)",
                [](const Machine&,
                   const RuntimeModelOptions& options) -> Result<std::unique_ptr<RuntimeModel>> {
                  if (auto ok = options.only({}, "trace"); !ok) return ok.error();
                  return std::unique_ptr<RuntimeModel>(std::make_unique<TraceModel>());
                }});
  registry.add({"hop-bytes",
                "time x (1 + a f^(b + c r)), f = extra all-to-all hop-bytes over the most compact "
                "allocation (SST's timeperdistance); options a=0.5 b=1 c=0 seed=1",
                [](const Machine& machine,
                   const RuntimeModelOptions& options) -> Result<std::unique_ptr<RuntimeModel>> {
                  ComponentOptions mine = options.for_component("hop-bytes");
                  if (auto ok = mine.only({"a", "b", "c", "seed"}); !ok) return ok.error();
                  auto a = mine.number_above("a", 0.5, 0);
                  if (!a) return a.error();
                  auto b = mine.number_above("b", 1, 0);
                  if (!b) return b.error();
                  auto c = mine.number_above("c", 0, -1);
                  if (!c) return c.error();
                  if (*c < 0) return mine.bad_value("c", "must be at least 0");
                  if (*c >= *b)
                    return mine.bad_value("c", "must be below b, so that b + c r stays positive");
                  auto seed = mine.whole_number("seed", 1, 0);
                  if (!seed) return seed.error();
                  return std::unique_ptr<RuntimeModel>(std::make_unique<HopBytesModel>(
                      machine, *a, *b, *c, static_cast<uint64_t>(*seed)));
                }});
  registry.add(
      {"congestion",
       "time x ((1 - comm) + comm L / L0), L = the most loaded link of its routes with its "
       "neighbours' traffic, L0 = alone on the most compact allocation; option comm=0.3",
       [](const Machine& machine,
          const RuntimeModelOptions& options) -> Result<std::unique_ptr<RuntimeModel>> {
         ComponentOptions mine = options.for_component("congestion");
         if (auto ok = mine.only({"comm"}); !ok) return ok.error();
         auto comm = mine.number_above("comm", 0.3, 0);
         if (!comm) return comm.error();
         if (*comm > 1) return mine.bad_value("comm", "is a share of the run time: at most 1");
         return std::unique_ptr<RuntimeModel>(std::make_unique<CongestionModel>(machine, *comm));
       }});
  return registry;
}

}  // namespace

const RuntimeModelRegistry& RuntimeModelRegistry::builtin() {
  static const RuntimeModelRegistry registry = make_builtin();
  return registry;
}

}  // namespace trellis
