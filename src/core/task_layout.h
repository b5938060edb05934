// TaskLayout: where the tasks (ranks) of a parallel job or step run, as srun places them. A step
// runs `ntasks` tasks on its nodes, numbered 0..ntasks-1; each node runs a count of them, and the
// distribution decides which ranks go where:
//   block   consecutive ranks fill a node before the next (ranks 0,1 on node 0, 2,3 on node 1)
//   cyclic  ranks are dealt to the nodes in turn (ranks 0,2 on node 0, 1,3 on node 1)
// Nodes are the step's, in the step's order (node 0 is the step's first node).
//
//   Result<TaskLayout> layout = TaskLayout::plan(4, 8, 0, Distribution::kBlock);
//   layout->ranks_on(1);               // {2, 3}
//   layout->slurm_tasks_per_node();    // "2(x4)"
//   layout->pmi_process_mapping();     // "(vector,(0,4,2))"
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

enum class Distribution { kBlock, kCyclic };
std::string_view distribution_name(Distribution d);              // "block", "cyclic"
Result<Distribution> parse_distribution(std::string_view text);  // "block" or "cyclic"

// At most this many tasks in one step, and per node: a bound on what one request can make an
// agent start.
inline constexpr int kMaxTasks = 1 << 20;
inline constexpr int kMaxTasksPerNode = 4096;

class TaskLayout {
 public:
  // The layout of `ntasks` tasks on `nnodes` nodes. `per_node` > 0 caps each node at that many
  // (block: nodes are filled to it in order, the last may hold fewer; cyclic: dealt in turn); 0
  // spreads the tasks evenly (the first ntasks % nnodes nodes get one more). ntasks 0 means one
  // per node (per_node per node when given). Errors name the field: more tasks than the nodes
  // can hold at per_node, fewer tasks than nodes when per_node is given (a node would be empty),
  // counts out of range.
  static Result<TaskLayout> plan(int nnodes, int ntasks, int per_node, Distribution distribution);
  // A layout from its per-node counts (each >= 0, at least one task), as a launch carries it.
  static Result<TaskLayout> from_counts(std::vector<int> counts, Distribution distribution);

  int ntasks() const { return ntasks_; }
  int nnodes() const { return static_cast<int>(counts_.size()); }
  Distribution distribution() const { return distribution_; }
  const std::vector<int>& counts() const { return counts_; }
  // The ranks that run on `node` (0-based in the step), ascending.
  std::vector<int> ranks_on(int node) const;
  // The node that runs `rank`.
  int node_of(int rank) const;

  // SLURM_TASKS_PER_NODE: the counts with runs compressed, "2(x3),1".
  std::string slurm_tasks_per_node() const;
  // PMI_process_mapping (Flux RFC 13): "(vector,(0,2,2))" for 2 nodes of 2 block-placed ranks;
  // each (first node, node count, ranks per node) block repeats until every rank is placed.
  std::string pmi_process_mapping() const;
  // "n[0-1]: 0-1 | 2-3" style text for `show job`: each node's ranks, compressed ("0,2" for
  // cyclic); `names` are the step's node names in order.
  std::string describe(const std::vector<std::string>& names) const;

 private:
  TaskLayout(std::vector<int> counts, Distribution distribution);
  std::vector<int> counts_;
  Distribution distribution_ = Distribution::kBlock;
  int ntasks_ = 0;
  std::vector<int> first_;  // block: each node's first rank
};

// "0-3,8" for ranks {0,1,2,3,8} (ascending).
std::string format_ranges(const std::vector<int>& ascending);

// The counts of a SLURM_TASKS_PER_NODE text ("2(x3),1" -> {2,2,2,1}), for tools that read it back.
Result<std::vector<int>> parse_slurm_tasks_per_node(std::string_view text);

}  // namespace trellis
