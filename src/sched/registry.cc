#include "sched/registry.h"

#include "sched/backfill.h"
#include "sched/fattree_batch.h"
#include "sched/fcfs.h"
#include "sched/scan.h"

namespace trellis {

namespace {

// A factory for policies that take no options.
template <typename P>
PolicyFactory plain(std::string_view name) {
  return [name](const Machine&, const PolicyOptions& o) -> Result<std::unique_ptr<QueuePolicy>> {
    if (auto ok = o.for_component(name).only({}); !ok) return ok.error();
    return std::unique_ptr<QueuePolicy>(std::make_unique<P>());
  };
}

}  // namespace

const PolicyRegistry& PolicyRegistry::builtin() {
  static const PolicyRegistry registry = [] {
    PolicyRegistry r;
    r.add({"fcfs", "first come first served: start jobs in order, stop at the first that waits",
           plain<FcfsPolicy>("fcfs")});
    r.add({"easy",
           "EASY backfilling: the head job holds a reservation by shape, later jobs may jump it",
           plain<EasyPolicy>("easy")});
    r.add({"conservative",
           "conservative backfilling: every queued job holds a reservation by shape",
           plain<ConservativePolicy>("conservative")});
    r.add({"scan-up", "ScanUp: serve size classes in increasing order, cyclically",
           plain<ScanPolicy<ScanDirection::kUp>>("scan-up")});
    r.add({"scan-down", "ScanDown: serve size classes in decreasing order, cyclically",
           plain<ScanPolicy<ScanDirection::kDown>>("scan-down")});
    r.add({"fattree-batch",
           "fat-tree batches: up to njob=4 jobs at once, largest first, when enough whole units "
           "are free",
           make_fattree_batch_factory()});
    return r;
  }();
  return registry;
}

}  // namespace trellis
