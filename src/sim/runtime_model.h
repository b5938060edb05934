// Run-time models: what a job's placement does to how long it runs. A trace records how long
// each job ran, not where, so without a model every allocator that takes any free nodes gives the
// same schedule and topology-aware allocation cannot pay off in the simulator. A model takes the
// recorded time to be the time on the most compact allocation of the job's size
// (alloc/most_compact.h) and inflates it when the job lands on a worse one. Time limits still kill:
// an inflated run that passes its limit ends there (TO).
//
//   trace       the run time as recorded, and no network figures (the default; the fastest).
//   hop-bytes   after SST's scheduler (`timeperdistance=a[b,c]`): time x (1 + a f^(b + c r)),
//               f = how much more hop-bytes the job's all-to-all traffic costs than on the most
//               compact allocation (hops / compact hops - 1, clamped at 0: 0 on the compact one),
//               r uniform in [-1, 1], drawn per job from the seed and the job id (so runs repeat
//               and a job's draw does not depend on the allocator). Options a, b, c, seed.
//   congestion  the job's all-to-all traffic routed as the machine routes it
//               (topology/link_load.h), counted together with the traffic of the jobs running
//               beside it (each node injects one unit in all, so a large job's messages are
//               smaller): time x ((1 - w) + w L / L0), at least 1, with L the load per unit of
//               capacity of the most loaded link the job uses, including its neighbours' traffic,
//               and L0 the same for the job alone on the most compact allocation; w is the share
//               of the run that is communication (option comm). Fragmentation thus also slows the
//               neighbours a job is threaded between. The factor is fixed when the job starts:
//               jobs that start later slow only themselves.
//
// Defaults: chosen, not fitted. SST leaves a, b, c to the user, and the Sandia papers report
// whole-system gains (throughput +14-19% from curve ordering, +5-11% more from best fit and span
// minimisation, seeds 003/004) rather than per-job factors. With a = 0.5, b = 1, c = 0 a job whose
// pairwise distances are twice the compact allocation's runs 1.5x as long; with comm = 0.3 a job
// whose bottleneck link carries twice its compact load runs 1.3x as long. They are options, so a
// site can fit its own applications.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/job.h"
#include "core/key_value.h"
#include "core/node_set.h"
#include "core/registry.h"
#include "topology/machine.h"

namespace trellis {

// What a model found for one started job.
struct NetworkCost {
  double inflation = 1;      // run time = recorded x inflation (before the time limit)
  double hop_bytes = 0;      // all-to-all hop-bytes: sum over ordered pairs of hops x 1 MiB
  double max_link_load = 0;  // messages per unit of capacity on its most loaded link (own traffic)
  double average_hops = 0;   // mean hops between two of its nodes (alloc/metrics.h)
};

class RuntimeModel {
 public:
  virtual ~RuntimeModel() = default;
  // Whether started() computes network figures (false for `trace`: nothing to report).
  virtual bool measures() const { return true; }
  // `job` starts on `nodes`: the factor its recorded run time is multiplied by, and its figures.
  virtual NetworkCost started(const Job& job, const NodeSet& nodes) = 0;
  // `id`, started before, has ended (the congestion model takes its traffic off the links).
  virtual void ended(JobId /*id*/) {}
};

// key=value options of a run-time model (a=0.5, comm=0.3, seed=7); errors name the model.
struct RuntimeModelOptions : KeyValueOptions {
  RuntimeModelOptions() : KeyValueOptions("run-time model") {}
};

struct RuntimeModelInfo {
  std::string name;
  std::string summary;  // one line for `trellis list`
  std::function<Result<std::unique_ptr<RuntimeModel>>(const Machine&, const RuntimeModelOptions&)>
      factory;
};

// The run-time models by name (core/registry.h has the verbs).
class RuntimeModelRegistry
    : public Registry<RuntimeModelInfo, RuntimeModel, const Machine&, const RuntimeModelOptions&> {
 public:
  RuntimeModelRegistry() : Registry("run-time model") {}
  // trace, hop-bytes, congestion.
  static const RuntimeModelRegistry& builtin();
};

}  // namespace trellis
