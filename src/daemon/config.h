// ClusterConfig: one cluster's settings, read from its TOML file (`trellis.toml`). Every program of
// the live system reads the same file: trellisd for its policy and limits, agents and the CLI for
// the controllers' addresses, the read path for the store URL. Clients find it through --conf or
// the TRELLIS_CONF variable, as Slurm's tools use SLURM_CONF.
//
//   [cluster]
//   machine = "torus:4x4x4"              # the machine spec (trellis topo --help)
//   store = "sqlite:/srv/trellis/state.db"
//   controllers = ["127.0.0.1:6817"]     # where clients and agents call; trellisd listens on its
//   own munge_socket = "/run/munge/munge.socket.2"   # "" = munged's default
//
//   [controller]
//   listen = "127.0.0.1:6817"            # port 0 = any free port (see port_file)
//   port_file = ""                       # where to write the bound port
//   policy = "easy"                      # a queue or gang policy of `trellis list`
//   allocator = ""                       # "" = the machine's default allocator
//   heartbeat_interval = 1.0             # seconds between the controller's liveness pings
//   heartbeat_misses = 3                 # an agent that misses this many pings in a row is
//                                        # unresponsive (its nodes get no new job); missing twice
//                                        # as many, and a direct probe, it is down (its jobs are
//                                        # requeued or fail)
//   node_failure = "requeue"             # a failed node's jobs: "requeue" or "fail" (NF)
//   max_requeue = 3                      # node-failure requeues after which a job is held (it
//                                        # waits for `trellis release`)
//   node_failure_drain = 3               # a node that failed this many jobs is drained
//   default_time_limit = 3600            # seconds, for jobs that give none
//   max_time_limit = 0                   # seconds; 0 = no maximum
//   kill_grace = 5.0                     # seconds between SIGTERM and SIGKILL
//   admins = [0]                         # uids that may act on any job and drain nodes
//   scheduler_lease = 0.5                # seconds: how long the controller that schedules holds
//                                        # its role unrenewed before another takes over
//   allocation = "lease"                 # several controllers on one store: "lease" (the lease
//                                        # holder places every job, in one queue order) or
//                                        # "concurrent" (each places the jobs it was given, on its
//                                        # own view of the free nodes; a start that meets another
//                                        # controller's is refused and retried; queue policies
//                                        # only). See "Several controllers" in docs/DESIGN.md.
//   slice = 0.1                          # gang policies: seconds per time slot
//   tree_fanout = 16                     # children per agent in the control tree (launches,
//                                        # signals, gang switches, pings); switch_fanout is
//                                        # its old name
//   deadlock = "report"                  # gang policies: a globally stopped job is "report"ed
//                                        # (its reason says so) or "kill"ed (it fails)
//   idle_detection = true                # gang policies: a job whose processes all wait for
//                                        # input gives its slots up until one of them wakes
//   activity_every = 4                   # gang policies: what a job's processes do (idle,
//                                        # deadlocked) is looked at when it is switched out the
//                                        # first time and every this many times after (1 = at
//                                        # every switch); a look over several slots still sees
//                                        # any CPU time used in them
//   max_job_test = 500                   # queue policies: queued jobs a pass looks at, from the
//                                        # head (Slurm's bf_max_job_test), so that a pass costs
//                                        # the same however deep the queue; 0 = all of them
//   max_array_size = 1001                # array task ids are 0 .. this - 1 (Slurm's MaxArraySize)
//   mpi = "auto"                         # how jobs' ranks wire up unless they say (--mpi):
//                                        # "auto" (what the program links: Open MPI gets PMIx,
//                                        # MPICH PMI-1, a script both; daemon/agent_requests.h),
//                                        # "pmi1" (MPICH...), "pmix" (Open MPI too), "none"
//   pmi_fanout = 2                       # children per agent in a step's PMI exchange tree
//   batch_wait = 0.002                   # seconds a batch of submissions or exit reports waits
//                                        # for more before its transaction, only while they
//                                        # arrive together (PostgreSQL's commit_delay): fewer,
//                                        # larger transactions under load; 0 = never wait
//
//   [priority]                           # the queue's order once accounts exist (sacctmgr);
//                                        # without any user, arrival order
//   fair_share = "fairtree"              # "fairtree" (Slurm's default), "classic" or "none"
//                                        # (arrival order even with accounts)
//   half_life = 604800                   # seconds: usage decays by half (PriorityDecayHalfLife)
//   weight_age = 1000                    # PriorityWeightAge
//   weight_fairshare = 10000             # PriorityWeightFairshare
//   weight_jobsize = 0                   # PriorityWeightJobSize
//   weight_qos = 0                       # PriorityWeightQOS (QOS Priority counts once set)
//   max_age = 604800                     # seconds of waiting that give the whole age weight
//
//   [[nodetype]]                         # what nodes have (Slurm's NodeName lines); none: nodes
//   name = "gpu"                         # are featureless and every job takes whole nodes
//   nodes = "n[0-3]"                     # a hostlist; "" = every node no other type names
//   resources = "sockets=2,cores=64,mem=256G,gpus=a100:4,features=ib"
//                                        # core/node_inventory.h's form: cores, sockets,
//                                        # threads, numa, mem, gpus=[TYPE:]N, gres, features
//
//   [[partition]]                        # named node sets (Slurm's partitions); none: one
//   name = "debug"                       # partition "main" of every node, the default
//   nodes = "n[0-15]"                    # a hostlist of the machine's nodes; "" = every node
//   default = true                       # jobs that name no partition go here (at most one)
//   max_time = 60                        # minutes; 0 = no limit (a job asking more is refused)
//   default_time = 10                    # minutes for jobs that give none; 0 = the controller's
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/node_inventory.h"
#include "core/result.h"

namespace trellis {

enum class NodeFailurePolicy { kRequeue, kFail };
enum class AllocationMode { kLease, kConcurrent };

struct ControllerSettings {
  std::string listen = "127.0.0.1:6817";
  std::string port_file;
  std::string policy = "easy";
  std::string allocator;
  Seconds heartbeat_interval = 1.0;
  int heartbeat_misses = 3;
  NodeFailurePolicy node_failure = NodeFailurePolicy::kRequeue;
  Seconds default_time_limit = 3600;
  Seconds max_time_limit = 0;
  Seconds kill_grace = 5.0;
  std::vector<int> admins = {0};
  Seconds scheduler_lease = 0.5;
  AllocationMode allocation = AllocationMode::kLease;
  Seconds slice = 0.1;
  int tree_fanout = 16;
  int max_requeue = 3;
  int node_failure_drain = 3;
  bool kill_deadlocked = false;
  bool idle_detection = true;
  int activity_every = 4;
  int max_job_test = 500;
  int max_array_size = 1001;
  std::string mpi = "auto";
  int pmi_fanout = 2;
  Seconds batch_wait = 0.002;
};

// [priority]: multifactor priority (sched/priority_order.h) once accounts exist.
struct PrioritySettings {
  std::string fair_share = "fairtree";  // fairtree, classic, none
  Seconds half_life = 7 * 86400;
  double weight_age = 1000;
  double weight_fairshare = 10000;
  double weight_jobsize = 0;
  double weight_qos = 0;
  Seconds max_age = 7 * 86400;
};

// A partition: a named set of nodes that jobs ask for by name (`-p`). The allocators still see
// the whole machine's topology; a job is placed only on its partition's nodes.
struct PartitionConfig {
  std::string name;
  std::string nodes;  // hostlist of node names ("n[0-15]"); "" = every node
  bool is_default = false;
  Seconds max_time = 0;      // 0 = no limit
  Seconds default_time = 0;  // 0 = the controller's default_time_limit
  // Jobs share its nodes, each given the cores, memory and GPUs it asks for (Slurm's
  // select/cons_tres), unless it asks for --exclusive; false: each job takes whole nodes unless
  // it asks to share (--oversubscribe). Needs a [[nodetype]] for every node of the partition.
  bool shared = false;
  int64_t default_mem_per_cpu_mb = 0;  // DefMemPerCPU; 0 = the node's memory per core
};

// A kind of node: what each node it names has to give jobs (core/node_inventory.h).
struct NodeTypeConfig {
  std::string name;
  std::string nodes;      // hostlist of node names; "" = every node no other type names
  std::string resources;  // as written: parse_node_inventory()'s text
  NodeInventory inventory;
};

struct ClusterConfig {
  std::string machine;
  std::string store;
  std::vector<std::string> controllers;
  std::string munge_socket;
  ControllerSettings controller;
  PrioritySettings priority;
  std::vector<PartitionConfig> partitions;  // as written; see cluster_partitions()
  std::vector<NodeTypeConfig> node_types;   // as written; at most one with nodes ""
};

// The partitions jobs are put in: those of the config, or when it names none, one partition
// "main" of every node. Exactly one is the default (the first when none says so).
std::vector<PartitionConfig> cluster_partitions(const ClusterConfig& config);

// Parses a config's text; `origin` names it in errors ("trellis.toml: [controller] policy: ...").
Result<ClusterConfig> parse_cluster_config(std::string_view text, std::string_view origin);
Result<ClusterConfig> load_cluster_config(const std::string& path);
// The text of `config` as TOML, readable by parse_cluster_config().
std::string format_cluster_config(const ClusterConfig& config);

// The config file a client uses: `flag` if given, else $TRELLIS_CONF; an error saying how to name
// one when neither is set.
Result<std::string> find_cluster_config(std::string_view flag);

}  // namespace trellis
