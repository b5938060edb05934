// The resource model's parsers (core/node_inventory.h, core/resource_request.h,
// core/node_grant.h): a node type as `[[nodetype]]` and `--node-type` give it, Slurm's resource
// options (--gres, --gpus, --mem, ...) applied in sequence, and the texts the store keeps. The
// first byte picks the surface. What must hold of any answer: a node type that parses has cores
// and a NUMA node and a socket for each of them and as many threads as cores x threads per core;
// a request built from options, or decoded, encodes to a text that decodes to the same request;
// what a node must give a request it can hold is within the node; grants read back the same;
// a binding (core/task_binding.h) reads back the same, and places tasks only on the job's CPUs
// and GPUs.
#include <sstream>

#include "core/node_grant.h"
#include "core/node_inventory.h"
#include "core/resource_request.h"
#include "core/task_binding.h"
#include "fuzz_support.h"

using namespace trellis;

namespace {

void check_round_trip(const ResourceRequest& request, const std::string& input) {
  const std::string text = encode_resource_request(request);
  Result<ResourceRequest> again = decode_resource_request(text);
  FUZZ_CHECK(again.ok(), "'" + text + "' does not decode: " + again.error().message);
  FUZZ_CHECK(*again == request, "'" + input + "' -> '" + text + "'");
}

void check_demand(const ResourceRequest& request, const NodeInventory& node,
                  const std::string& input) {
  for (int tasks : {1, 3}) {
    Result<NodeDemand> demand = node_demand(request, tasks, 2, node, 0);
    if (!demand) continue;
    FUZZ_CHECK(demand->cores >= 1 && demand->cores <= node.cores(), input);
    FUZZ_CHECK(demand->memory_mb >= 0 && demand->memory_mb <= node.memory_mb, input);
    FUZZ_CHECK(demand->gpus >= 0 && demand->gpus <= static_cast<int>(node.gpus.size()), input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string input(fuzz::as_text(data + 1, size - 1));
  switch (data[0] % 5) {
    case 0: {  // a node type
      Result<NodeInventory> node = parse_node_inventory(input);
      if (!node) return 0;
      FUZZ_CHECK(node->cores() >= 1 && node->numa_nodes >= 1 && node->sockets >= 1, input);
      FUZZ_CHECK(node->cpus() == node->cores() * node->threads_per_core, input);
      for (int core = 0; core < node->cores(); core += std::max(1, node->cores() / 64)) {
        FUZZ_CHECK(node->numa_of(core) >= 0 && node->numa_of(core) < node->numa_nodes, input);
        FUZZ_CHECK(node->socket_of(core) >= 0 && node->socket_of(core) < node->sockets, input);
      }
      for (const Gpu& gpu : node->gpus)
        FUZZ_CHECK(gpu.numa >= 0 && gpu.numa < node->numa_nodes, input);
      (void)slurm_node_line(*node);
      (void)gres_text(*node);
      return 0;
    }
    case 1: {  // options, one per line: NAME=VALUE (as sbatch hands them over)
      ResourceRequest request;
      std::istringstream lines(input);
      for (std::string line; std::getline(lines, line);) {
        size_t eq = line.find('=');
        std::string option = line.substr(0, eq);
        std::string value = eq == std::string::npos ? "" : line.substr(eq + 1);
        ResourceRequest before = request;
        if (Status ok = apply_resource_option(option, value, request); !ok)
          request = before;  // a refused option leaves the request as it was for the caller
      }
      check_round_trip(request, input);
      static const NodeInventory node =
          *parse_node_inventory("sockets=2,cores=16,numa=2,mem=64G,gpus=a100:4,gres=license:2");
      check_demand(request, node, input);
      return 0;
    }
    case 2: {  // the stored text
      Result<ResourceRequest> request = decode_resource_request(input);
      if (request) check_round_trip(*request, input);
      return 0;
    }
    case 4: {  // a binding: "CPU_BIND|GPU_BIND|TASKS"
      const size_t bar = input.find('|');
      const size_t second = bar == std::string::npos ? bar : input.find('|', bar + 1);
      Result<CpuBind> cpu = parse_cpu_bind(input.substr(0, bar));
      Result<GpuBind> gpu =
          parse_gpu_bind(bar == std::string::npos ? "" : input.substr(bar + 1, second - bar - 1));
      if (!cpu || !gpu) return 0;
      FUZZ_CHECK(*parse_cpu_bind(cpu_bind_text(*cpu)) == *cpu, input);
      FUZZ_CHECK(*parse_gpu_bind(gpu_bind_text(*gpu)) == *gpu, input);
      static const NodeInventory node = *parse_node_inventory("sockets=2,cores=8,threads=2,gpus=4");
      NodeGrant grant;
      grant.node = 0;
      grant.cores = {1, 2, 5};
      grant.gpus = {0, 3};
      const int tasks = second == std::string::npos ? 1 : 1 + (input[second] % 8);
      BindingRequest request;
      request.tasks = tasks;
      request.cpus_per_task = 1;
      request.gpus_per_task = tasks % 3;
      request.cpu = *cpu;
      request.gpu = *gpu;
      Result<std::vector<TaskPlacement>> placed = place_tasks(node, grant, request, "n0");
      if (!placed) return 0;
      FUZZ_CHECK(static_cast<int>(placed->size()) == tasks, input);
      for (const TaskPlacement& p : *placed) {
        for (int cpu_id : p.cpus) {
          const int core = cpu_id / 2;
          FUZZ_CHECK(core == 1 || core == 2 || core == 5,
                     input + ": CPU " + std::to_string(cpu_id));
        }
        for (int g : p.gpus) FUZZ_CHECK(g == 0 || g == 3, input + ": GPU " + std::to_string(g));
      }
      return 0;
    }
    default: {  // grants
      Result<std::vector<NodeGrant>> grants = decode_grants(input);
      if (!grants) return 0;
      const std::string text = encode_grants(*grants);
      Result<std::vector<NodeGrant>> again = decode_grants(text);
      FUZZ_CHECK(again.ok(), "'" + text + "' does not decode: " + again.error().message);
      FUZZ_CHECK(*again == *grants, "'" + input + "' -> '" + text + "'");
      return 0;
    }
  }
}
