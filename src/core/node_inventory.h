// What one node has to give out to jobs: its cores (each on a socket and a NUMA node), hardware
// threads per core, memory, GPUs (each with its identity: type, PCI bus id, device file, NUMA
// node) and count-only generic resources (licenses, bandwidth), and the features jobs may ask
// for by name (-C/--constraint). A site describes each kind of node once ([[nodetype]] in the
// cluster config, daemon/config.h); the agent compares what hwloc finds with it
// (daemon/node_discovery.h). Slurm's NodeName line and gres.conf hold the same facts.
//
// Cores are numbered 0..cores()-1 socket by socket (Slurm's logical core ids); NUMA nodes split
// them in equal consecutive runs. A job is given whole cores: a core's threads go together.
//
//   Result<NodeInventory> node = parse_node_inventory("cores=64,sockets=2,mem=256G,gpus=a100:4");
//   node->cores();          // 64
//   node->numa_of(40);      // 1
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

// One GPU of a node. Its index in NodeInventory::gpus is its global id on the node (Slurm's
// SLURM_JOB_GPUS); the job sees the ones it is given as 0, 1, ... (CUDA_VISIBLE_DEVICES).
struct Gpu {
  std::string type;     // "a100", "" when untyped
  std::string pci_bus;  // "0000:3b:00.0", "" when unknown (the order then is the index)
  std::string device;   // "/dev/nvidia0": what the device cgroup allows or refuses
  int numa = 0;         // the NUMA node it is attached to
  bool operator==(const Gpu&) const = default;
};

struct NodeInventory {
  int sockets = 1;
  int cores_per_socket = 1;
  int threads_per_core = 1;
  int numa_nodes = 1;     // NUMA nodes, splitting the cores in equal consecutive runs
  int64_t memory_mb = 0;  // what jobs may be given (RealMemory less the system's reserve)
  std::vector<Gpu> gpus;
  std::map<std::string, int64_t> counts;  // generic resources counted only: name -> how many
  std::vector<std::string> features;

  int cores() const { return sockets * cores_per_socket; }
  int cpus() const { return cores() * threads_per_core; }  // hardware threads
  int socket_of(int core) const { return core / cores_per_socket; }
  int numa_of(int core) const;
  bool has_feature(std::string_view feature) const;
  // GPUs of `type` ("" = any type).
  int gpus_of_type(std::string_view type) const;
  bool operator==(const NodeInventory&) const = default;
};

// Slurm's words for it, as `slurmd -C` and `scontrol show node` print them:
// "CPUs=64 Boards=1 SocketsPerBoard=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=262144".
std::string slurm_node_line(const NodeInventory& node);
// "gpu:a100:4,license:2" ("(null)" when none), as Slurm's Gres= field.
std::string gres_text(const NodeInventory& node);

// A node type from "key=value,..." (the form `trellis sim --node-type` and tests give):
//   cores=N | sockets=N,cores_per_socket=N   threads=N   numa=N   mem=SIZE (K/M/G/T, MiB bare)
//   gpus=[TYPE:]N  gpu_files=PATH+PATH...  gres=NAME:N[+NAME:N...]  features=a+b
// (gpu_files: each GPU's device file, in index order; /dev/nvidiaN when not given)
// Errors name the key and what was expected.
Result<NodeInventory> parse_node_inventory(std::string_view text);

// The text parse_node_inventory() reads back to the same counts ("sockets=2,cores=64,threads=2,
// numa=4,mem=256G,gpus=a100:4,gres=license:2,features=ib+gpu"), with gpu_files when a GPU's
// device file is not /dev/nvidiaN; GPUs' bus ids, and the types of a node with GPUs of several
// types, are not in it.
std::string node_inventory_text(const NodeInventory& node);

// Whether the node's GPUs name device files of their own (gpu_files), not /dev/nvidiaN.
bool gpu_files_given(const NodeInventory& node);

// What `configured` has that `found` lacks, for an agent's check of its node against its
// [[nodetype]]: "" when found holds it all, else the shortfalls ("cores: 64 configured, 2 found;
// memory: 256G configured, 23G found"). Memory counts as held within 2% (firmware and kernel take
// some of what is installed).
std::string shortfall(const NodeInventory& configured, const NodeInventory& found);

// Memory sizes as Slurm takes them: a number of MiB, or with a K, M, G or T suffix ("2G" =
// 2048); 0 allowed. Errors name `what`.
Result<int64_t> parse_memory_mb(std::string_view text, std::string_view what);
// 2048 -> "2G", 1536 -> "1536M": Slurm's compact form.
std::string format_memory_mb(int64_t mb);

}  // namespace trellis
