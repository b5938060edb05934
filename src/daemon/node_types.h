// NodeTypes: which kind of node (the config's [[nodetype]], daemon/config.h) each node of the
// machine is, and so what it has to give jobs (core/node_inventory.h). The controller asks it at
// submission whether any node of a job's partition could ever hold what the job asks (cores per
// task, memory, GPUs, generic resources, features), so that an impossible request is refused
// with its reason instead of pending forever, as Slurm's "Requested node configuration is not
// available" does.
//
// A machine with no [[nodetype]] has featureless nodes: every job takes whole nodes and no
// request beyond the node count is checked. A node that no type names (when no type has nodes
// "") is featureless too, and is taken to hold any request.
//
//   Result<NodeTypes> types = NodeTypes::build(config.node_types, machine.node_count());
//   Status ok = types->check_fits(job, partition_nodes, "debug");  // kNeverFits when not
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/node_inventory.h"
#include "core/node_set.h"
#include "core/result.h"
#include "daemon/config.h"
#include "store/state_store.h"

namespace trellis {

class NodeTypes {
 public:
  NodeTypes() = default;
  // Errors name the type and what is wrong with its nodes (a node named by two types).
  static Result<NodeTypes> build(const std::vector<NodeTypeConfig>& types, int node_count);

  bool empty() const { return types_.empty(); }
  // The inventory of `node`, or null when it is featureless.
  const NodeInventory* of(NodeId node) const;
  // The name of `node`'s type ("" when featureless).
  std::string_view type_name(NodeId node) const;

  // Whether `job`'s request can ever be met on the nodes of `partition` (null: every node),
  // named `partition_name` in the error: some `job.request.nodes` of them hold what one node of
  // the job must give. A kNeverFits error says why not ("4 GPUs per node asked, its nodes have
  // 0"; "only 2 nodes of partition gpu hold 64 cores, the job asks for 4").
  Status check_fits(const StoredJob& job, const NodeSet* partition,
                    std::string_view partition_name) const;

  // The fewest nodes of `partition` (null: every node) that hold all of `job`'s tasks, whatever
  // its request.nodes says: the smallest k for which k nodes of the partition each hold their
  // share of the tasks (check_fits with k nodes). 0 when no count does. How a shared partition
  // places `-n 8` without `-N`, as Slurm's select/cons_tres packs tasks onto few nodes.
  int fewest_nodes(StoredJob job, const NodeSet* partition) const;

  // Whether every node has a type (what a scheduling core with a pool needs).
  bool covers_every_node() const;
  // The types' inventories and each node's index into them, as BatchOptions takes them
  // (sched/batch_core.h); only when covers_every_node().
  std::vector<NodeInventory> inventories() const;
  std::vector<uint16_t> type_indexes() const;
  // The most tasks any node of `job` runs (its layout's), at least 1.
  static int most_tasks_per_node(const StoredJob& job);

 private:
  std::vector<NodeTypeConfig> types_;
  std::vector<int> type_of_;  // per node: index into types_, -1 when featureless
};

}  // namespace trellis
