#include "sched/gang/message.h"

namespace trellis::gang {

std::string_view to_string(MessageKind kind) {
  switch (kind) {
    case MessageKind::kAddTask:
      return "add_task";
    case MessageKind::kActivate:
      return "activate";
    case MessageKind::kDeactivate:
      return "deactivate";
    case MessageKind::kNextTurn:
      return "next_turn";
    case MessageKind::kRounding:
      return "rounding";
    case MessageKind::kRounded:
      return "rounded";
    case MessageKind::kTaskDone:
      return "task_done";
    case MessageKind::kInfo:
      return "info";
  }
  return "?";
}

}  // namespace trellis::gang
