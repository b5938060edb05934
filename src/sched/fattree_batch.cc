#include "sched/fattree_batch.h"

#include "alloc/fattree/unit_allocator.h"

#include <algorithm>
#include <vector>

namespace trellis {

namespace {

// Nodes in wholly free units.
int free_unit_nodes(const NodeSet& free, int unit) {
  int total = 0;
  for (NodeId first = 0; first + unit <= free.size(); first += unit) {
    bool whole = true;
    for (NodeId id = first; id < first + unit && whole; ++id) whole = free.test(id);
    if (whole) total += unit;
  }
  return total;
}

Result<int> positive_option(const ComponentOptions& options, const std::string& key, int fallback) {
  auto value = options.whole_number(key, fallback, 1);
  if (!value) return value.error();
  return static_cast<int>(*value);
}

}  // namespace

int FatTreeBatchPolicy::default_unit(const Machine& machine) {
  const FatTree* tree = machine.fat_tree();
  return tree ? minimum_unit_size(*tree) : 1;
}

Schedule FatTreeBatchPolicy::schedule(const SchedulerView& view, const Allocator& allocator) const {
  Schedule out;
  NodeSet free = view.free;
  std::vector<bool> started(view.queue.size(), false);
  size_t head = 0;
  while (head < view.queue.size()) {
    // The batch: the next njob jobs not yet started, shrunk until the free units suffice.
    std::vector<size_t> batch;
    for (size_t i = head; i < view.queue.size() && batch.size() < static_cast<size_t>(njob_); ++i)
      if (!started[i]) batch.push_back(i);
    int available = free_unit_nodes(free, unit_);
    auto total = [&] {
      long sum = 0;
      for (size_t i : batch) sum += view.queue[i]->request.nodes;
      return sum;
    };
    while (batch.size() > 1 && total() > available) batch.pop_back();
    if (batch.empty() || total() > available) break;
    std::stable_sort(batch.begin(), batch.end(), [&](size_t a, size_t b) {
      return view.queue[a]->request.nodes > view.queue[b]->request.nodes;
    });
    bool any = false;
    for (size_t i : batch) {
      auto placement = allocator.allocate(free, view.queue[i]->request);
      if (!placement) continue;  // a shape that does not fit: the job waits for a later pass
      free -= placement->nodes;
      started[i] = true;
      any = true;
      out.starts.push_back({i, std::move(*placement)});
    }
    if (!any) break;
    while (head < view.queue.size() && started[head]) ++head;
  }
  std::sort(
      out.starts.begin(), out.starts.end(),
      [](const StartDecision& a, const StartDecision& b) { return a.queue_index < b.queue_index; });
  return out;
}

PolicyFactory make_fattree_batch_factory() {
  return [](const Machine& machine,
            const PolicyOptions& given) -> Result<std::unique_ptr<QueuePolicy>> {
    ComponentOptions options = given.for_component("fattree-batch");
    if (auto ok = options.only({"njob", "unit"}); !ok) return ok.error();
    auto njob = positive_option(options, "njob", 4);
    if (!njob) return njob.error();
    auto unit = positive_option(options, "unit", FatTreeBatchPolicy::default_unit(machine));
    if (!unit) return unit.error();
    return std::unique_ptr<QueuePolicy>(std::make_unique<FatTreeBatchPolicy>(*njob, *unit));
  };
}

}  // namespace trellis
