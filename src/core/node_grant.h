// NodeGrant: what one job holds on one node when nodes are shared: the cores (ids on the node,
// core/node_inventory.h's numbering), the memory, the GPUs (indexes into the node's GPUs: their
// global ids) and the counted resources. A job on whole nodes has no grants. The scheduler makes
// them (alloc/node_pool.h), the store keeps them with the job's allocation, the agent enforces
// them (cpuset, memory limit, device access) and names them to the job (SLURM_JOB_GPUS,
// CUDA_VISIBLE_DEVICES).
//
// As text, one node's grant is "NODE:c=0-3;m=2048;g=0,1;r=license:1" (parts that are empty left
// out), and a job's are those separated by spaces.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_set.h"
#include "core/result.h"

namespace trellis {

struct NodeGrant {
  NodeId node = -1;
  std::vector<int> cores;  // ascending
  int64_t memory_mb = 0;
  std::vector<int> gpus;  // ascending
  std::map<std::string, int64_t> counts;
  bool operator==(const NodeGrant&) const = default;
};

std::string encode_grant(const NodeGrant& grant);
std::string encode_grants(const std::vector<NodeGrant>& grants);
// Errors name the piece that is wrong; ids are checked against nothing but themselves (the pool
// checks them against the node).
Result<NodeGrant> decode_grant(std::string_view text);
Result<std::vector<NodeGrant>> decode_grants(std::string_view text);

}  // namespace trellis
