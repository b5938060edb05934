// Task allocation policies (TAP, thesis section 7.1.5): where `add_task` sends a new job on its
// way down the DQT. At every node above the job's partition size the policy picks one child from
// the children's SubtreeSummary; ties always go to the leftmost child.
//
//   MAX-TQLB  the child with the smallest M (largest TQLB below it)
//   MIN-TQLB  the child with the smallest N (smallest TQLB below it)
//   APA       the child with the smallest assigned processor amount A
//   FF        the child holding the shortest queue among nodes of the job's size
//   FF-APA    FF, and APA among the children FF ties on (the thesis's best; the default)
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "sched/gang/subtree_summary.h"

namespace trellis::gang {

enum class TaskAllocationPolicy { kMaxTqlb, kMinTqlb, kApa, kFirstFit, kFirstFitApa };

// "maxtqlb", "mintqlb", "apa", "ff", "ffapa".
std::string_view to_string(TaskAllocationPolicy policy);
std::optional<TaskAllocationPolicy> parse_task_allocation_policy(std::string_view name);

// The index (0 = leftmost) of the child that receives a job whose partition is at `job_depth`.
// `children` is never empty.
int choose_child(TaskAllocationPolicy policy, std::span<const SubtreeSummary> children,
                 int job_depth);

}  // namespace trellis::gang
