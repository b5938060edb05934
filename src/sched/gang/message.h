// Message: what DQT nodes send each other (thesis section 7.1.1). Nodes share no state; every
// decision is made from the node's own queue, the messages it receives and the summaries its
// children reported, so the tree can later run with its nodes on different processors.
//
//   down (parent -> child): add_task, activate, deactivate, next_turn
//   up   (child -> parent): rounding, rounded, info
//   from the job's partition to its node: task_done
#pragma once

#include <cstdint>
#include <string_view>

#include "core/job.h"
#include "sched/gang/partition_tree.h"

namespace trellis::gang {

// The address of the slot driver above the root: it sends the root `next_turn` once per slot,
// and starts a new lap with `activate` when the root answers `rounded`.
constexpr TreeNodeId kSlotDriver = -1;

enum class MessageKind : uint8_t {
  kAddTask,     // enqueue `job` at `job_depth`, or pass it to a child chosen by the TAP
  kActivate,    // start a lap: run the own queue, or activate the children if it is empty
  kDeactivate,  // end the lap in the whole subtree; cancels selections not yet run
  kNextTurn,    // the slot is over: run the next own job, or pass the turn to the children
  kRounding,    // reply to next_turn: the subtree is in the middle of its lap
  kRounded,     // reply to next_turn: every child has finished at least one lap
  kTaskDone,    // `job` finished (or is suspended) and leaves the node's queue
  kInfo,        // the sender's subtree changed; its SubtreeSummary travels with the message
};

std::string_view to_string(MessageKind kind);

struct Message {
  MessageKind kind = MessageKind::kNextTurn;
  TreeNodeId to = kSlotDriver;
  TreeNodeId from = kSlotDriver;
  JobId job = 0;           // add_task, task_done
  int job_depth = 0;       // add_task: the depth of the job's partition
  TreeNodeId target = -1;  // add_task: a fixed partition (a resumed job), or -1 for the TAP
};

}  // namespace trellis::gang
