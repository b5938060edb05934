#include "daemon/node_types.h"

#include <algorithm>

#include "core/hostlist.h"
#include "core/task_layout.h"

namespace trellis {

Result<NodeTypes> NodeTypes::build(const std::vector<NodeTypeConfig>& types, int node_count) {
  NodeTypes out;
  out.types_ = types;
  out.type_of_.assign(static_cast<size_t>(node_count), -1);
  int catch_all = -1;
  for (size_t t = 0; t < types.size(); ++t) {
    if (types[t].nodes.empty()) {
      catch_all = static_cast<int>(t);
      continue;
    }
    Result<NodeSet> nodes = parse_hostlist(types[t].nodes, node_count);
    if (!nodes) return fail("[[nodetype]] " + types[t].name + " nodes: " + nodes.error().message);
    if (nodes->empty()) return fail("[[nodetype]] " + types[t].name + " nodes: no node");
    Status twice = Ok{};
    nodes->for_each([&](NodeId n) {
      int& type = out.type_of_[static_cast<size_t>(n)];
      if (type >= 0 && twice)
        twice = fail("[[nodetype]] " + types[t].name + " nodes: n" + std::to_string(n) +
                     " is of type " + types[static_cast<size_t>(type)].name + " already");
      type = static_cast<int>(t);
    });
    if (!twice) return twice.error();
  }
  if (catch_all >= 0)
    for (int& type : out.type_of_)
      if (type < 0) type = catch_all;
  return out;
}

const NodeInventory* NodeTypes::of(NodeId node) const {
  if (node < 0 || static_cast<size_t>(node) >= type_of_.size()) return nullptr;
  int type = type_of_[static_cast<size_t>(node)];
  return type < 0 ? nullptr : &types_[static_cast<size_t>(type)].inventory;
}

std::string_view NodeTypes::type_name(NodeId node) const {
  if (node < 0 || static_cast<size_t>(node) >= type_of_.size()) return "";
  int type = type_of_[static_cast<size_t>(node)];
  return type < 0 ? std::string_view() : types_[static_cast<size_t>(type)].name;
}

bool NodeTypes::covers_every_node() const {
  return !types_.empty() &&
         std::none_of(type_of_.begin(), type_of_.end(), [](int type) { return type < 0; });
}

std::vector<NodeInventory> NodeTypes::inventories() const {
  std::vector<NodeInventory> out;
  for (const NodeTypeConfig& type : types_) out.push_back(type.inventory);
  return out;
}

std::vector<uint16_t> NodeTypes::type_indexes() const {
  std::vector<uint16_t> out;
  out.reserve(type_of_.size());
  for (int type : type_of_) out.push_back(static_cast<uint16_t>(std::max(type, 0)));
  return out;
}

int NodeTypes::most_tasks_per_node(const StoredJob& job) {
  Result<TaskLayout> layout = TaskLayout::plan(job.request.nodes, job.tasks.ntasks,
                                               job.tasks.per_node, job.tasks.distribution);
  int most = 1;
  if (layout)
    for (int count : layout->counts()) most = std::max(most, count);
  return most;
}

Status NodeTypes::check_fits(const StoredJob& job, const NodeSet* partition,
                             std::string_view partition_name) const {
  if (types_.empty()) return Ok{};
  const int tasks_per_node = most_tasks_per_node(job);
  // Nodes of the partition per type (the last slot: featureless ones, which hold anything).
  std::vector<int> nodes_of(types_.size() + 1, 0);
  for (size_t n = 0; n < type_of_.size(); ++n) {
    if (partition && !partition->test(static_cast<NodeId>(n))) continue;
    int type = type_of_[n];
    ++nodes_of[type < 0 ? types_.size() : static_cast<size_t>(type)];
  }
  int holding = nodes_of.back();
  std::string why;  // of the first type (with nodes in the partition) that cannot hold it
  for (size_t t = 0; t < types_.size(); ++t) {
    if (nodes_of[t] == 0) continue;
    Result<NodeDemand> demand = node_demand(job.resources, tasks_per_node, job.request.nodes,
                                            types_[t].inventory, /*default_mem_per_cpu_mb=*/0);
    if (demand) {
      holding += nodes_of[t];
    } else if (why.empty()) {
      why = demand.error().message + " (node type " + types_[t].name + ")";
    }
  }
  const std::string where = "partition " + std::string(partition_name);
  if (holding == 0)
    return fail(Error::Code::kNeverFits, "no node of " + where + " can hold the job: " + why);
  if (holding < job.request.nodes)
    return fail(Error::Code::kNeverFits,
                "only " + std::to_string(holding) + " nodes of " + where +
                    " can hold what each node of the job must give, and it asks for " +
                    std::to_string(job.request.nodes) + (why.empty() ? "" : " (" + why + ")"));
  return Ok{};
}

int NodeTypes::fewest_nodes(StoredJob job, const NodeSet* partition) const {
  const int tasks = std::max(job.tasks.ntasks, 1);
  int nodes = 0;
  for (size_t n = 0; n < type_of_.size(); ++n)
    if (!partition || partition->test(static_cast<NodeId>(n))) ++nodes;
  // No node gives more cores than the largest type: start the search at what that bounds.
  int most_cores = 1;
  for (const NodeTypeConfig& type : types_)
    most_cores = std::max(most_cores, type.inventory.cores());
  const int64_t cores = int64_t{tasks} * std::max(job.resources.cpus_per_task, 1);
  const int start =
      static_cast<int>(std::min<int64_t>(tasks, (cores + most_cores - 1) / most_cores));
  for (int k = std::max(start, 1); k <= std::min(tasks, nodes); ++k) {
    job.request.nodes = k;
    job.tasks.per_node = 0;
    if (check_fits(job, partition, "")) return k;
  }
  return 0;
}

}  // namespace trellis
