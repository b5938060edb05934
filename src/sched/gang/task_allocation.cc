#include "sched/gang/task_allocation.h"

#include <array>

namespace trellis::gang {

namespace {

constexpr std::array<std::pair<TaskAllocationPolicy, std::string_view>, 5> kNames = {{
    {TaskAllocationPolicy::kMaxTqlb, "maxtqlb"},
    {TaskAllocationPolicy::kMinTqlb, "mintqlb"},
    {TaskAllocationPolicy::kApa, "apa"},
    {TaskAllocationPolicy::kFirstFit, "ff"},
    {TaskAllocationPolicy::kFirstFitApa, "ffapa"},
}};

// The leftmost child with the smallest key among those `eligible`.
template <typename Key, typename Eligible>
int leftmost_min(std::span<const SubtreeSummary> children, Key key, Eligible eligible) {
  int best = -1;
  for (int k = 0; k < static_cast<int>(children.size()); ++k) {
    if (!eligible(k)) continue;
    if (best < 0 || key(children[k]) < key(children[best])) best = k;
  }
  return best;
}

}  // namespace

std::string_view to_string(TaskAllocationPolicy policy) {
  for (const auto& [p, name] : kNames)
    if (p == policy) return name;
  return "?";
}

std::optional<TaskAllocationPolicy> parse_task_allocation_policy(std::string_view name) {
  for (const auto& [p, n] : kNames)
    if (n == name) return p;
  return std::nullopt;
}

int choose_child(TaskAllocationPolicy policy, std::span<const SubtreeSummary> children,
                 int job_depth) {
  auto all = [](int) { return true; };
  auto ff_key = [job_depth](const SubtreeSummary& s) { return s.shortest_queue[job_depth]; };
  auto apa_key = [](const SubtreeSummary& s) { return s.apa; };
  switch (policy) {
    case TaskAllocationPolicy::kMaxTqlb:
      return leftmost_min(
          children, [](const SubtreeSummary& s) { return s.max_tqlb; }, all);
    case TaskAllocationPolicy::kMinTqlb:
      return leftmost_min(
          children, [](const SubtreeSummary& s) { return s.min_tqlb; }, all);
    case TaskAllocationPolicy::kApa:
      return leftmost_min(children, apa_key, all);
    case TaskAllocationPolicy::kFirstFit:
      return leftmost_min(children, ff_key, all);
    case TaskAllocationPolicy::kFirstFitApa: {
      int best_ff = ff_key(children[leftmost_min(children, ff_key, all)]);
      return leftmost_min(children, apa_key, [&](int k) { return ff_key(children[k]) == best_ff; });
    }
  }
  return 0;
}

}  // namespace trellis::gang
