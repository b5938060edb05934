// The text a queue policy's scheduler keeps in the store's core_state between passes: its
// reservations (the promises of conservative backfilling) and the frozen times of running jobs that
// an administrator suspended, so that a restarted controller keeps both. Written by
// Controller::batch_state_text(), read back by Controller::rebuild().
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job.h"
#include "sched/policy.h"
#include "store/state_store.h"

namespace trellis {

// The reservations as a JSON array of {"job", "start", "nodes"}.
std::string reservations_to_text(const std::vector<Reservation>& reservations);

// Reads reservations back, keeping only those of jobs still pending; anything malformed is
// dropped (a reservation is a promise the next pass remakes, never needed for correctness).
std::vector<Reservation> reservations_from_json(const nlohmann::json& parsed, int node_count,
                                                const std::map<JobId, StoredJob>& pending);

// A suspended job's frozen time, as a queue policy's core_state keeps it.
struct SavedFreeze {
  int attempt = 0;
  bool frozen = false;
  Seconds frozen_since = 0;
  Seconds frozen_before = 0;
};

// A queue policy's core_state: the reservations alone (an array: the format before suspensions,
// and still when no running job has been suspended), or with the frozen times of running jobs
// ({"reservations": [...], "frozen": [...]}). Malformed entries are dropped.
struct SavedBatchState {
  std::vector<Reservation> reservations;
  std::map<JobId, SavedFreeze> frozen;
};
SavedBatchState batch_state_from_text(const std::string& text, int node_count,
                                      const std::map<JobId, StoredJob>& pending);

}  // namespace trellis
