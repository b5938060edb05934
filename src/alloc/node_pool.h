// NodePool: what every node of a machine has left to give while jobs share nodes, and what on a
// node a job is given. It is the resource model's state (core/node_inventory.h is the model, what
// each node has; alloc/node_sharing.h is the match policy that uses this to place jobs), kept
// the way Slurm's select/cons_tres keeps it: per node, a bitmask of free cores, free memory, a
// bitmask of free GPUs and the counted resources left.
//
// What a job gets on a node sits close together: its GPUs on one NUMA node where they fit, its
// cores on the NUMA node of its GPUs (or, without GPUs, on the NUMA node they fill best), taking
// other NUMA nodes only when one is not enough. Across nodes, a job of one node goes where it
// leaves the least free (best fit), so that whole nodes stay free for jobs that need them, and a
// job that asks no GPU goes to a node without free GPUs when it can, so that CPU jobs do not
// take the cores GPU jobs need.
//
//   NodePool pool({gpu_node_type}, {}, 64);
//   if (auto grant = pool.choose(7, demand)) pool.take(*grant, user);
//   pool.give_back(*grant);  // the job ended
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/node_grant.h"
#include "core/node_inventory.h"
#include "core/node_set.h"
#include "core/resource_request.h"

namespace trellis {

class NodePool {
 public:
  // A machine of `node_count` nodes, node i of type types[type_of[i]] (every node of types[0]
  // when type_of is empty). GPUs beyond 64 per node are not given out.
  NodePool(std::vector<NodeInventory> types, std::vector<uint16_t> type_of, int node_count);

  int node_count() const { return static_cast<int>(type_of_.size()); }
  const NodeInventory& inventory(NodeId node) const { return types_[type_of_[node]]; }
  const std::vector<NodeInventory>& types() const { return types_; }
  int type_of(NodeId node) const { return type_of_[node]; }

  // Nodes with nothing given out, and nodes with at least one free core (not held whole).
  const NodeSet& idle_nodes() const { return idle_; }
  const NodeSet& open_nodes() const { return open_; }
  int free_cores(NodeId node) const { return state_[node].free_cores; }
  int64_t free_memory_mb(NodeId node) const { return state_[node].free_memory_mb; }
  int free_gpus(NodeId node, const std::string& type = "") const;

  // Whether `node` can hold `demand` now: its features, the cores, memory, GPUs of the type and
  // counted resources free, the node idle for a whole-node demand, and the users of its jobs
  // for a same-user one (or one that meets a node held so).
  bool fits(NodeId node, const NodeDemand& demand) const;
  // The nodes of `among` that fit `demand`.
  NodeSet fitting(const NodeSet& among, const NodeDemand& demand) const;
  // What `node` gives for `demand` (see above), or nullopt when it does not fit.
  std::optional<NodeGrant> choose(NodeId node, const NodeDemand& demand) const;
  // The node of `among` that `demand` fits best (see above; ties: the lowest id), or nullopt.
  std::optional<NodeId> best_fit(const NodeSet& among, const NodeDemand& demand) const;

  // Takes a grant out of its node, for a job of `user` (same_user_only: the node then takes
  // only that user's jobs until it is given back). An error, changing nothing, when any part
  // of it is not free: never a core, byte or GPU given twice.
  Status take(const NodeGrant& grant, int user = -1, bool same_user_only = false);
  // Gives a taken grant back (with the user and flag it was taken with).
  void give_back(const NodeGrant& grant, int user = -1, bool same_user_only = false);
  // Everything of `node`, as a grant (a whole-node job's).
  NodeGrant whole(NodeId node) const;
  // Every node free again, as when the pool was made.
  void clear();

  // Totals over the machine, for reports: cores and GPUs in all and free, memory.
  struct Totals {
    int64_t cores = 0, free_cores = 0;
    int64_t gpus = 0, free_gpus = 0;
    int64_t memory_mb = 0, free_memory_mb = 0;
    // Free cores on nodes that are not idle, over all free cores: how much of what is free is in
    // pieces (0 when every free core is on an idle node).
    double fragmentation = 0;
  };
  Totals totals() const;

 private:
  struct State {
    int free_cores = 0;
    int64_t free_memory_mb = 0;
    uint64_t free_gpus = 0;  // bit i: GPU i free
    int holders = 0;         // grants taken and not given back
    int same_user_holders = 0;
    int user = -1;  // the user of every grant on it (-1: none yet; -2: several users)
    std::map<std::string, int64_t> counts_used;
  };
  uint64_t* core_words(NodeId node) { return &core_words_[static_cast<size_t>(node) * words_]; }
  const uint64_t* core_words(NodeId node) const {
    return &core_words_[static_cast<size_t>(node) * words_];
  }
  bool gpu_of_type(NodeId node, int gpu, const std::string& type) const;
  void refresh(NodeId node);  // idle_ and open_ from its state

  std::vector<NodeInventory> types_;
  std::vector<uint16_t> type_of_;
  int words_ = 1;  // 64-bit words of free cores per node
  std::vector<uint64_t> core_words_;
  std::vector<State> state_;
  NodeSet idle_, open_;
};

}  // namespace trellis
