#include "alloc/node_pool.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <stdexcept>
#include <tuple>

namespace trellis {
namespace {

constexpr int kMostGpus = 64;

int gpu_count(const NodeInventory& node) {
  return std::min<int>(kMostGpus, static_cast<int>(node.gpus.size()));
}

}  // namespace

NodePool::NodePool(std::vector<NodeInventory> types, std::vector<uint16_t> type_of, int node_count)
    : types_(std::move(types)), type_of_(std::move(type_of)) {
  if (types_.empty()) types_.push_back(NodeInventory{});
  if (type_of_.empty()) type_of_.assign(static_cast<size_t>(std::max(node_count, 0)), 0);
  if (static_cast<int>(type_of_.size()) != node_count)
    throw std::invalid_argument("NodePool: a type for each node, or none");
  for (uint16_t t : type_of_)
    if (t >= types_.size()) throw std::invalid_argument("NodePool: a node of no type");
  for (const NodeInventory& t : types_) words_ = std::max(words_, (t.cores() + 63) / 64);
  core_words_.assign(static_cast<size_t>(node_count) * words_, 0);
  clear();
}

void NodePool::clear() {
  const int n = node_count();
  std::fill(core_words_.begin(), core_words_.end(), 0);
  state_.assign(static_cast<size_t>(n), State{});
  idle_ = NodeSet(n);
  open_ = NodeSet(n);
  for (NodeId node = 0; node < n; ++node) give_back(whole(node));
}

bool NodePool::gpu_of_type(NodeId node, int gpu, const std::string& type) const {
  return type.empty() || inventory(node).gpus[static_cast<size_t>(gpu)].type == type;
}

int NodePool::free_gpus(NodeId node, const std::string& type) const {
  uint64_t free = state_[node].free_gpus;
  if (type.empty()) return std::popcount(free);
  int n = 0;
  for (; free != 0; free &= free - 1) n += gpu_of_type(node, std::countr_zero(free), type) ? 1 : 0;
  return n;
}

void NodePool::refresh(NodeId node) {
  const State& s = state_[node];
  if (s.holders == 0)
    idle_.set(node);
  else
    idle_.reset(node);
  if (s.free_cores > 0)
    open_.set(node);
  else
    open_.reset(node);
}

bool NodePool::fits(NodeId node, const NodeDemand& d) const {
  const State& s = state_[node];
  const NodeInventory& inv = inventory(node);
  if (!meets_constraint(inv, d.constraint)) return false;
  if (d.whole) return s.holders == 0 && (d.gpus == 0 || free_gpus(node, d.gpu_type) >= d.gpus);
  if (s.free_cores < d.cores || s.free_memory_mb < d.memory_mb) return false;
  if (d.gpus > 0 && free_gpus(node, d.gpu_type) < d.gpus) return false;
  for (const auto& [name, count] : d.counts) {
    auto have = inv.counts.find(name);
    auto used = s.counts_used.find(name);
    int64_t left = (have == inv.counts.end() ? 0 : have->second) -
                   (used == s.counts_used.end() ? 0 : used->second);
    if (left < count) return false;
  }
  // --exclusive=user: with the same user's jobs only, both ways.
  if (s.holders > 0 && (d.same_user_only || s.same_user_holders > 0) && s.user != d.user)
    return false;
  return true;
}

NodeSet NodePool::fitting(const NodeSet& among, const NodeDemand& demand) const {
  NodeSet out(node_count());
  // The types that could ever hold it: most nodes are passed over without a look at their state.
  std::vector<char> type_may(types_.size());
  for (size_t t = 0; t < types_.size(); ++t) {
    const NodeInventory& inv = types_[t];
    type_may[t] =
        meets_constraint(inv, demand.constraint) &&
        (demand.whole || (inv.cores() >= demand.cores && inv.memory_mb >= demand.memory_mb &&
                          inv.gpus_of_type(demand.gpu_type) >= demand.gpus));
  }
  among.for_each([&](NodeId node) {
    if (type_may[type_of_[node]] && fits(node, demand)) out.set(node);
  });
  return out;
}

std::optional<NodeGrant> NodePool::choose(NodeId node, const NodeDemand& d) const {
  if (!fits(node, d)) return std::nullopt;
  if (d.whole) return whole(node);
  const NodeInventory& inv = inventory(node);
  const State& s = state_[node];
  const int numas = std::max(1, inv.numa_nodes);
  // Free cores and free GPUs of the type, per NUMA node.
  std::vector<std::vector<int>> cores_on(static_cast<size_t>(numas)),
      gpus_on(static_cast<size_t>(numas));
  const uint64_t* words = core_words(node);
  for (int w = 0; w < words_; ++w)
    for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      int core = w * 64 + std::countr_zero(bits);
      cores_on[static_cast<size_t>(inv.numa_of(core))].push_back(core);
    }
  for (uint64_t bits = s.free_gpus; bits != 0; bits &= bits - 1) {
    int gpu = std::countr_zero(bits);
    if (gpu_of_type(node, gpu, d.gpu_type))
      gpus_on[static_cast<size_t>(
                  std::clamp(inv.gpus[static_cast<size_t>(gpu)].numa, 0, numas - 1))]
          .push_back(gpu);
  }
  auto size_of = [](const std::vector<int>& v) { return static_cast<int>(v.size()); };
  // NUMA nodes in order of distance from `home` (then by number).
  auto from = [&](int home) {
    std::vector<int> order(static_cast<size_t>(numas));
    for (int k = 0; k < numas; ++k) order[static_cast<size_t>(k)] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return std::abs(a - home) < std::abs(b - home); });
    return order;
  };
  NodeGrant g;
  g.node = node;
  g.memory_mb = d.memory_mb;
  g.counts = d.counts;
  int home = -1;
  if (d.gpus > 0) {
    // The NUMA node that holds all the GPUs and the cores, the tightest first; else the one with
    // the most GPUs, the rest from the nearest.
    std::tuple<int, int, int, int> best{2, 0, 0, 0};
    for (int k = 0; k < numas; ++k) {
      const int g_k = size_of(gpus_on[static_cast<size_t>(k)]),
                c_k = size_of(cores_on[static_cast<size_t>(k)]);
      std::tuple<int, int, int, int> score = g_k >= d.gpus && c_k >= d.cores
                                                 ? std::tuple{0, g_k - d.gpus, c_k - d.cores, k}
                                             : g_k >= d.gpus ? std::tuple{1, -c_k, g_k - d.gpus, k}
                                                             : std::tuple{2, -g_k, -c_k, k};
      if (home < 0 || score < best) {
        best = score;
        home = k;
      }
    }
    for (int k : from(home))
      for (int gpu : gpus_on[static_cast<size_t>(k)])
        if (size_of(g.gpus) < d.gpus) g.gpus.push_back(gpu);
  } else {
    // The NUMA node the cores fill best; else the one with the most free cores.
    std::tuple<int, int, int> best{2, 0, 0};
    for (int k = 0; k < numas; ++k) {
      const int c_k = size_of(cores_on[static_cast<size_t>(k)]);
      std::tuple<int, int, int> score =
          c_k >= d.cores ? std::tuple{0, c_k - d.cores, k} : std::tuple{1, -c_k, k};
      if (home < 0 || score < best) {
        best = score;
        home = k;
      }
    }
  }
  for (int k : from(home))
    for (int core : cores_on[static_cast<size_t>(k)])
      if (size_of(g.cores) < d.cores) g.cores.push_back(core);
  std::sort(g.cores.begin(), g.cores.end());
  std::sort(g.gpus.begin(), g.gpus.end());
  return g;
}

std::optional<NodeId> NodePool::best_fit(const NodeSet& among, const NodeDemand& d) const {
  std::optional<NodeId> best;
  std::tuple<int, int, int64_t, int> best_score{};
  among.for_each([&](NodeId node) {
    if (!fits(node, d)) return;
    const State& s = state_[node];
    // A job without GPUs keeps off nodes whose GPUs are free; then the tightest fit.
    const int keeps_gpus_idle = d.gpus == 0 && s.free_gpus != 0 ? 1 : 0;
    std::tuple<int, int, int64_t, int> score{keeps_gpus_idle, s.free_cores - d.cores,
                                             s.free_memory_mb - d.memory_mb,
                                             free_gpus(node, d.gpu_type) - d.gpus};
    if (!best || score < best_score) {
      best = node;
      best_score = score;
    }
  });
  return best;
}

Status NodePool::take(const NodeGrant& g, int user, bool same_user_only) {
  if (g.node < 0 || g.node >= node_count())
    return fail("node " + std::to_string(g.node) + " is not one of the machine's");
  const NodeInventory& inv = inventory(g.node);
  State& s = state_[g.node];
  const std::string where = "node " + std::to_string(g.node) + ": ";
  uint64_t* words = core_words(g.node);
  for (int core : g.cores) {
    if (core < 0 || core >= inv.cores())
      return fail(where + "core " + std::to_string(core) + " is not one of its");
    if (!((words[core / 64] >> (core % 64)) & 1))
      return fail(where + "core " + std::to_string(core) + " is given already");
  }
  if (g.memory_mb > s.free_memory_mb)
    return fail(where + std::to_string(g.memory_mb) + " MiB asked, " +
                std::to_string(s.free_memory_mb) + " free");
  uint64_t gpu_bits = 0;
  for (int gpu : g.gpus) {
    if (gpu < 0 || gpu >= gpu_count(inv))
      return fail(where + "GPU " + std::to_string(gpu) + " is not one of its");
    if (!((s.free_gpus >> gpu) & 1))
      return fail(where + "GPU " + std::to_string(gpu) + " is given already");
    gpu_bits |= uint64_t{1} << gpu;
  }
  for (const auto& [name, count] : g.counts) {
    auto have = inv.counts.find(name);
    int64_t left = (have == inv.counts.end() ? 0 : have->second) - s.counts_used[name];
    if (left < count)
      return fail(where + name + ": " + std::to_string(count) + " asked, " + std::to_string(left) +
                  " left");
  }
  for (int core : g.cores) words[core / 64] &= ~(uint64_t{1} << (core % 64));
  s.free_cores -= static_cast<int>(g.cores.size());
  s.free_memory_mb -= g.memory_mb;
  s.free_gpus &= ~gpu_bits;
  for (const auto& [name, count] : g.counts) s.counts_used[name] += count;
  s.user = s.holders == 0 ? user : (s.user == user ? user : -2);
  ++s.holders;
  if (same_user_only) ++s.same_user_holders;
  refresh(g.node);
  return Ok{};
}

void NodePool::give_back(const NodeGrant& g, int /*user*/, bool same_user_only) {
  if (g.node < 0 || g.node >= node_count()) return;
  const NodeInventory& inv = inventory(g.node);
  State& s = state_[g.node];
  uint64_t* words = core_words(g.node);
  for (int core : g.cores)
    if (core >= 0 && core < inv.cores() && !((words[core / 64] >> (core % 64)) & 1)) {
      words[core / 64] |= uint64_t{1} << (core % 64);
      ++s.free_cores;
    }
  s.free_memory_mb = std::min(inv.memory_mb, s.free_memory_mb + g.memory_mb);
  for (int gpu : g.gpus)
    if (gpu >= 0 && gpu < gpu_count(inv)) s.free_gpus |= uint64_t{1} << gpu;
  for (const auto& [name, count] : g.counts) {
    auto used = s.counts_used.find(name);
    if (used != s.counts_used.end() && (used->second -= count) <= 0) s.counts_used.erase(used);
  }
  if (s.holders > 0) --s.holders;
  if (same_user_only && s.same_user_holders > 0) --s.same_user_holders;
  if (s.holders == 0) {
    s.user = -1;
    s.same_user_holders = 0;
  }
  refresh(g.node);
}

NodeGrant NodePool::whole(NodeId node) const {
  const NodeInventory& inv = inventory(node);
  NodeGrant g;
  g.node = node;
  for (int c = 0; c < inv.cores(); ++c) g.cores.push_back(c);
  g.memory_mb = inv.memory_mb;
  for (int i = 0; i < gpu_count(inv); ++i) g.gpus.push_back(i);
  g.counts = inv.counts;
  return g;
}

NodePool::Totals NodePool::totals() const {
  Totals t;
  int64_t free_on_busy = 0;
  for (NodeId node = 0; node < node_count(); ++node) {
    const NodeInventory& inv = inventory(node);
    const State& s = state_[node];
    t.cores += inv.cores();
    t.free_cores += s.free_cores;
    t.gpus += gpu_count(inv);
    t.free_gpus += std::popcount(s.free_gpus);
    t.memory_mb += inv.memory_mb;
    t.free_memory_mb += s.free_memory_mb;
    if (s.holders > 0) free_on_busy += s.free_cores;
  }
  t.fragmentation = t.free_cores > 0 ? static_cast<double>(free_on_busy) / t.free_cores : 0;
  return t;
}

}  // namespace trellis
