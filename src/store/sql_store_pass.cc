// The SQL store's passes (sql_store.h): the starts a scheduling pass decided, its pending notes
// and the core's state, in one transaction of two round trips: one that locks and reads what the
// starts depend on (the jobs, the nodes, the allocations on them, the lease) and writes the notes,
// and the commit, which carries the allocations, the jobs' new states and the log.
//
// Node assignment is the one thing serialised between controllers, and only per node: a pass
// locks the rows of the nodes it takes (in id order) before it looks at their allocations, so two
// passes that take different nodes commit side by side, and of two that take the same node the
// second sees the first's allocation once it has committed. The database's unique index and
// trigger still refuse a node given twice whatever this code decides.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "store/json_fields.h"
#include "store/sql_rows.h"
#include "store/sql_store.h"

namespace trellis {

using sql::JobStatus;
using sql::Rows;
using sql::Session;
using sql::transaction;
using namespace json_fields;  // NOLINT

namespace {

// A start's nodes sorted, or why the start is malformed (a caller's bug: the pass fails whole).
Result<std::vector<NodeId>> checked_nodes(Session& db, const JobStart& start) {
  std::string job = "job " + std::to_string(start.job);
  if (start.nodes.empty()) {
    return db.fail(Error::Code::kInvalidArgument, job + " is started on no nodes");
  }
  if (start.box_anchor.size() != start.box_extents.size()) {
    return db.fail(Error::Code::kInvalidArgument,
                   job + "'s box has an anchor of " + std::to_string(start.box_anchor.size()) +
                       " coordinates and " + std::to_string(start.box_extents.size()) + " extents");
  }
  std::vector<NodeId> nodes = start.nodes;
  std::sort(nodes.begin(), nodes.end());
  if (auto dup = std::adjacent_find(nodes.begin(), nodes.end()); dup != nodes.end()) {
    return db.fail(Error::Code::kInvalidArgument,
                   job + " is started on node " + std::to_string(*dup) + " twice");
  }
  if (Status s = sql::check_node_ids(db, nodes); !s) return s.error();
  return nodes;
}

// Who holds a node now: its name and its allocations (job, exclusive).
struct NodeHolders {
  std::string name;
  std::vector<std::pair<JobId, bool>> jobs;
};

}  // namespace

Result<PassOutcome> SqlStore::apply_pass(const PassCommit& pass, Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "commit_pass", true, [&](bool& changed) -> Result<PassOutcome> {
    PassOutcome outcome;
    std::vector<std::vector<NodeId>> nodes_of;
    std::vector<NodeId> all_nodes;
    std::vector<JobId> jobs;
    for (const JobStart& start : pass.starts) {
      Result<std::vector<NodeId>> nodes = checked_nodes(db, start);
      if (!nodes) return nodes.error();
      all_nodes.insert(all_nodes.end(), nodes->begin(), nodes->end());
      nodes_of.push_back(std::move(*nodes));
      jobs.push_back(start.job);
    }
    std::sort(all_nodes.begin(), all_nodes.end());
    all_nodes.erase(std::unique(all_nodes.begin(), all_nodes.end()), all_nodes.end());
    std::sort(jobs.begin(), jobs.end());

    // Round trip 1: the lease, the jobs (locked), the nodes (locked, in id order) and who holds
    // them, the notes, and the core state as it is.
    const sql::Dialect& d = db.dialect();
    std::vector<sql::Statement> reads;
    auto add = [&](std::string text, std::vector<sql::Param> params) -> size_t {
      reads.push_back({std::move(text), std::move(params)});
      return reads.size() - 1;
    };
    size_t lease_at = 0, jobs_at = 0, names_at = 0, holders_at = 0, state_at = 0;
    if (!pass.scheduler.empty())
      lease_at = add("SELECT holder FROM leases WHERE role = ?" + std::string(d.for_share),
                     {sql::kSchedulerRole});
    if (!jobs.empty()) {
      jobs_at = add("SELECT id, state, attempt, share, stop FROM jobs WHERE id " +
                        std::string(d.ints_in) + " ORDER BY id" + std::string(d.for_update),
                    {encode_ints(jobs)});
      names_at = add("SELECT id, name FROM nodes WHERE id" + std::string(d.ints_in) +
                         " ORDER BY id" + std::string(d.for_update),
                     {encode_ints(all_nodes)});
      holders_at =
          add("SELECT n.id, n.name, a.job_id, a.exclusive FROM nodes n JOIN allocations a "
              "ON a.node_id = n.id WHERE n.id " +
                  std::string(d.ints_in) + " ORDER BY n.id, a.exclusive DESC, a.job_id",
              {encode_ints(all_nodes)});
    }
    auto column = [&](int index, std::string_view type) {
      return sql::json_column(d, index, type);
    };
    std::optional<size_t> notes_at;
    if (!pass.notes.empty()) {
      // One statement for every note. A note is for a job the pass saw pending; one that has
      // started or ended since (another writer, or a start of this pass, which clears it) keeps
      // its state. An unchanged note writes nothing.
      // A job noted twice keeps its last note (one row per job: an UPDATE ... FROM with two
      // would take either).
      std::map<JobId, const PendingNote*> last;
      for (const PendingNote& note : pass.notes) last[note.job] = &note;
      nlohmann::json rows = nlohmann::json::array();
      std::vector<JobId> noted;
      for (const auto& [job, note] : last) {
        rows.push_back({job, note->reason, note->expected_start});
        noted.push_back(job);
      }
      // The ids again, so that each job is looked up by its key (Dialect::rows_ids_in); the
      // state is tested through an expression, which no index serves, for the same reason.
      notes_at =
          add("UPDATE jobs SET reason = n.reason, expected_start = n.expected FROM (SELECT " +
                  column(0, "int64") + " AS id, " + column(1, "text") + " AS reason, " +
                  column(2, "real") + " AS expected FROM " + std::string(d.json_rows) +
                  ") AS n WHERE jobs.id" + std::string(d.rows_ids_in) +
                  " AND jobs.id = n.id AND coalesce(jobs.state, '') = 'PD' AND "
                  "(jobs.reason <> n.reason OR jobs.expected_start <> n.expected)",
              {dump(rows), encode_ints(noted)});
    }
    if (pass.core_state) state_at = add("SELECT value FROM meta WHERE key = 'core_state'", {});
    Result<std::vector<Rows>> read = reads.empty() ? std::vector<Rows>{} : db.query_batch(reads);
    if (!read) return read.error();

    if (!pass.scheduler.empty()) {
      const Rows& lease = (*read)[lease_at];
      std::string holder = lease.empty() ? "" : lease.text(0, 0);
      if (holder != pass.scheduler) {
        return db.fail(Error::Code::kDoesNotFitNow,
                       pass.scheduler + " does not hold the scheduler lease (" +
                           (holder.empty() ? std::string("no one does") : holder + " does") + ")");
      }
    }
    if (notes_at && (*read)[*notes_at].affected() > 0) changed = true;
    if (pass.core_state) {
      // Most passes leave the reservations as they were: then the version stays too.
      const Rows& old = (*read)[state_at];
      if (old.empty() || old.is_null(0, 0) || old.text(0, 0) != *pass.core_state) {
        if (Status s = db.defer("INSERT INTO meta (key, value) VALUES ('core_state', ?) "
                                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                {*pass.core_state});
            !s) {
          return s.error();
        }
        changed = true;
      }
    }
    if (pass.starts.empty()) return outcome;

    std::map<JobId, JobStatus> status_of;
    const Rows& job_rows = (*read)[jobs_at];
    for (size_t r = 0; r < job_rows.size(); ++r) {
      JobStatus s;
      s.id = job_rows.int64(r, 0);
      Result<JobState> state = parse_job_state(job_rows.text(r, 1));
      if (!state)
        return db.fail(Error::Code::kInternal,
                       "job " + std::to_string(s.id) + " has a malformed state");
      s.state = *state;
      s.attempt = job_rows.integer(r, 2);
      s.share = job_rows.integer(r, 3) != 0;
      status_of[s.id] = s;
    }
    std::map<NodeId, NodeHolders> holders;
    const Rows& names = (*read)[names_at];
    for (size_t r = 0; r < names.size(); ++r) holders[names.integer(r, 0)].name = names.text(r, 1);
    const Rows& held = (*read)[holders_at];
    for (size_t r = 0; r < held.size(); ++r) {
      NodeHolders& h = holders[held.integer(r, 0)];
      h.name = held.text(r, 1);
      h.jobs.emplace_back(held.int64(r, 2), held.integer(r, 3) != 0);
    }

    // The rows the pass's two statements write: [job, node, exclusive] and [job, attempt,
    // nodes, box anchor, box extents, grants].
    nlohmann::json allocations = nlohmann::json::array();
    nlohmann::json started = nlohmann::json::array();
    std::vector<JobId> started_ids;
    // Each start in the pass's order: refused (the whole pass, or only it when partial) if its
    // job is not pending on the attempt before, or a node it takes is held, or taken by an
    // earlier start of this pass.
    for (size_t i = 0; i < pass.starts.size(); ++i) {
      const JobStart& start = pass.starts[i];
      const std::vector<NodeId>& nodes = nodes_of[i];
      std::string job = "job " + std::to_string(start.job);
      std::string why;
      auto status = status_of.find(start.job);
      bool exclusive = status != status_of.end() && !status->second.share && !start.shares_nodes;
      if (status == status_of.end()) {
        if (!pass.partial)
          return db.fail(Error::Code::kNotFound, "no job " + std::to_string(start.job));
        why = "no job " + std::to_string(start.job);
      } else if (status->second.state != JobState::kPending) {
        why = job + " cannot start: it is " + std::string(state_name(status->second.state));
      } else if (start.attempt != status->second.attempt + 1) {
        why = job + " cannot start as attempt " + std::to_string(start.attempt) +
              ": its next attempt is " + std::to_string(status->second.attempt + 1);
      } else {
        for (NodeId node : nodes) {
          auto h = holders.find(node);
          if (h == holders.end()) continue;  // not a node of this pass
          for (const auto& [holder, held_exclusively] : h->second.jobs) {
            if (!exclusive && !held_exclusively) continue;  // shared beside shared
            why = job + " cannot start: node " + std::to_string(node) + " (" + h->second.name +
                  ") is held " + (held_exclusively ? "exclusively " : "") + "by job " +
                  std::to_string(holder);
            break;
          }
          if (!why.empty()) break;
        }
      }
      if (!why.empty()) {
        if (!pass.partial) return db.fail(Error::Code::kDoesNotFitNow, why);
        outcome.refused.push_back(start.job);
        outcome.reasons.push_back(why);
        continue;
      }
      // Taken: later starts of this pass see these nodes held.
      status_of[start.job].state = JobState::kRunning;
      for (NodeId node : nodes) holders[node].jobs.emplace_back(start.job, exclusive);

      // Round trip 2 (the commit's): the allocations and the jobs, one statement each for the
      // whole pass (below), and the log. The node ids are in the log, as id ranges, so that an
      // auditor can replay who held what, and when.
      std::string ranges = sql::encode_nodes(nodes);
      for (NodeId node : nodes) allocations.push_back({start.job, node, exclusive ? 1 : 0});
      started.push_back({start.job, start.attempt, ranges, encode_ints(start.box_anchor),
                         encode_ints(start.box_extents), encode_grants(start.grants)});
      started_ids.push_back(start.job);
      // A start that shares its nodes names what it holds on each (core/node_grant.h), so that
      // the auditor can replay who held which core, byte and GPU, too.
      sql::log_event(db, now, "start", start.job, "",
                     "attempt " + std::to_string(start.attempt) + " on " +
                         std::to_string(nodes.size()) + " nodes: " + ranges +
                         (start.grants.empty() ? "" : " | grants: " + encode_grants(start.grants)));
      changed = true;
    }
    if (started.empty()) return outcome;
    if (Status s = db.defer("INSERT INTO allocations (job_id, node_id, exclusive) SELECT " +
                                column(0, "int64") + ", " + column(1, "int64") + ", " +
                                column(2, "int64") + " FROM " + std::string(d.json_rows),
                            {dump(allocations)});
        !s) {
      return s.error();
    }
    if (Status s = db.defer(
            "UPDATE jobs SET state = 'R', attempt = s.attempt, start_time = ?, end_time = 0, "
            "expected_start = 0, reason = '', nodes = s.nodes, box_anchor = s.anchor, "
            "box_extents = s.extents, grants = s.grants, exit_code = 0, signal = 0, stop = '' "
            "FROM (SELECT " +
                column(0, "int64") + " AS id, " + column(1, "int64") + " AS attempt, " +
                column(2, "text") + " AS nodes, " + column(3, "text") + " AS anchor, " +
                column(4, "text") + " AS extents, " + column(5, "text") + " AS grants FROM " +
                std::string(d.json_rows) + ") AS s WHERE jobs.id" + std::string(d.rows_ids_in) +
                " AND jobs.id = s.id",
            {now, dump(started), encode_ints(started_ids)});
        !s) {
      return s.error();
    }
    return outcome;
  });
}

}  // namespace trellis
