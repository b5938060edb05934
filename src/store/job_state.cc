// The job states' letters and names, and the end rule (state_store.h).
#include <array>
#include <cctype>

#include "store/state_store.h"

namespace trellis {
namespace {

struct StateText {
  JobState state;
  std::string_view letter;
  std::string_view name;
};
constexpr std::array<StateText, 10> kStates{{
    {JobState::kPending, "PD", "PENDING"},
    {JobState::kRunning, "R", "RUNNING"},
    {JobState::kSuspended, "S", "SUSPENDED"},
    {JobState::kCompleting, "CG", "COMPLETING"},
    {JobState::kCompleted, "CD", "COMPLETED"},
    {JobState::kFailed, "F", "FAILED"},
    {JobState::kCancelled, "CA", "CANCELLED"},
    {JobState::kTimeout, "TO", "TIMEOUT"},
    {JobState::kNodeFail, "NF", "NODE_FAIL"},
    {JobState::kOutOfMemory, "OOM", "OUT_OF_MEMORY"},
}};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

}  // namespace

std::string_view state_letter(JobState state) {
  return kStates[static_cast<int>(state)].letter;
}
std::string_view state_name(JobState state) {
  return kStates[static_cast<int>(state)].name;
}

Result<JobState> parse_job_state(std::string_view text) {
  for (const StateText& s : kStates) {
    if (equal_ignoring_case(text, s.letter) || equal_ignoring_case(text, s.name)) return s.state;
  }
  return fail("unknown job state '" + std::string(text) +
              "' (expected a letter PD R S CG CD F CA TO NF OOM or a name such as RUNNING)");
}

bool is_final(JobState state) {
  switch (state) {
    case JobState::kPending:
    case JobState::kRunning:
    case JobState::kSuspended:
    case JobState::kCompleting:
      return false;
    default:
      return true;
  }
}

JobEnd end_by_rule(JobId job, int attempt, StopCause stop, int exit_code, int signal,
                   const std::string& stopped_reason) {
  JobEnd end;
  end.job = job;
  end.attempt = attempt;
  end.exit_code = exit_code;
  end.signal = signal;
  switch (stop) {
    case StopCause::kFailed:
      end.state = JobState::kFailed;
      end.reason = stopped_reason;
      break;
    case StopCause::kOutOfMemory:
      end.state = JobState::kOutOfMemory;
      end.reason = stopped_reason;
      break;
    case StopCause::kCancel:
      end.state = JobState::kCancelled;
      end.reason = "cancelled";
      break;
    case StopCause::kTimeout:
      end.state = JobState::kTimeout;
      end.reason = "time limit reached";
      break;
    case StopCause::kNone:
      if (exit_code != 0 || signal != 0) {
        end.state = JobState::kFailed;
        end.reason = signal != 0 ? "killed by signal " + std::to_string(signal)
                                 : "exit code " + std::to_string(exit_code);
      }
      break;
  }
  return end;
}

}  // namespace trellis
