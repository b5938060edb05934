// The StateStore's reads and writes in SQL (sql_store.h), for both engines: the cluster, the
// change counter, the scheduler lease and the log here; jobs in sql_store_jobs.cc, passes in
// sql_store_pass.cc, nodes in sql_store_nodes.cc. The session is in sql_session.h, the schema in
// sql_schema.h, the shared row helpers in sql_rows.h.
#include "store/sql_store.h"

#include <algorithm>
#include <set>
#include <utility>

#include "core/id_ranges.h"
#include "store/json_fields.h"
#include "store/sql_rows.h"
#include "store/sql_schema.h"

namespace trellis {

using sql::Param;
using sql::Rows;
using sql::Session;
using sql::transaction;
using namespace json_fields;  // NOLINT

SqlStore::SqlStore(std::unique_ptr<Session> db, sql::SessionPool::Opener open_more, int sessions)
    : pool_(std::move(db), std::move(open_more), sessions) {}
SqlStore::~SqlStore() = default;

const std::string& SqlStore::name() const {
  return pool_.first().name();
}

int64_t SqlStore::round_trips() const {
  int64_t total = 0;
  pool_.for_each([&](const Session& db) { total += db.round_trips(); });
  return total;
}

std::map<std::string, StateStore::OperationCounts> SqlStore::operation_counts() const {
  std::map<std::string, OperationCounts> out;
  pool_.for_each([&](const Session& db) {
    for (const auto& [op, c] : db.operation_counts()) {
      OperationCounts& sum = out[op];
      sum.calls += c.calls;
      sum.round_trips += c.round_trips;
      sum.statements += c.statements;
    }
  });
  return out;
}

Result<std::unique_ptr<SqlStore>> SqlStore::open(std::unique_ptr<Session> session,
                                                 sql::SessionPool::Opener open_more, int sessions) {
  Status schema = session->read_only() ? sql::check_schema(*session) : sql::migrate(*session);
  if (!schema) return schema.error();
  return std::unique_ptr<SqlStore>(
      new SqlStore(std::move(session), std::move(open_more), sessions));
}

Status SqlStore::init_cluster(std::string_view machine_spec,
                              const std::vector<std::string>& node_names) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "init_cluster", true, [&](bool& changed) -> Status {
    if (machine_spec.empty()) return db.fail(Error::Code::kInvalidArgument, "no machine spec");
    if (node_names.empty()) return db.fail(Error::Code::kInvalidArgument, "no node names");
    std::set<std::string_view> seen;
    for (const std::string& name : node_names) {
      if (name.empty()) return db.fail(Error::Code::kInvalidArgument, "a node name is empty");
      if (!is_utf8(name)) return db.fail(Error::Code::kInvalidArgument, "a node name is not UTF-8");
      if (!seen.insert(name).second) {
        return db.fail(Error::Code::kInvalidArgument, "node name '" + name + "' appears twice");
      }
    }
    // Two controllers that open a new store at once must not both create its nodes.
    if (Status s = db.lock_writers_now(); !s) return s;
    Result<std::optional<std::string>> spec = sql::meta_text(db, "machine_spec");
    if (!spec) return spec.error();
    if (*spec) {
      // Initialised before: the same cluster is fine, another one is a misdirected controller.
      Result<Rows> rows = db.query("SELECT name FROM nodes ORDER BY id");
      if (!rows) return rows.error();
      std::vector<std::string> names;
      for (size_t r = 0; r < rows->size(); ++r) names.push_back(rows->text(r, 0));
      std::string theirs = "'" + **spec + "' (" + std::to_string(names.size()) + " nodes)";
      std::string ours =
          "'" + std::string(machine_spec) + "' (" + std::to_string(node_names.size()) + " nodes)";
      if (**spec != machine_spec || names.size() != node_names.size()) {
        return db.fail(Error::Code::kInvalidArgument,
                       "the store holds the cluster " + theirs + ", not " + ours);
      }
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] != node_names[i]) {
          return db.fail(Error::Code::kInvalidArgument, "the store holds the cluster " + theirs +
                                                            " whose node " + std::to_string(i) +
                                                            " is '" + names[i] + "', not '" +
                                                            node_names[i] + "'");
        }
      }
      return Ok{};
    }
    if (Status s = sql::set_meta(db, "machine_spec", machine_spec); !s) return s;
    // Every node in one statement per 16,384 (a machine of 110,592 nodes is 7 statements).
    constexpr size_t kNodesPerStatement = 16384;
    for (size_t first = 0; first < node_names.size(); first += kNodesPerStatement) {
      nlohmann::json names = nlohmann::json::array();
      size_t last = std::min(node_names.size(), first + kNodesPerStatement);
      for (size_t i = first; i < last; ++i) names.push_back(node_names[i]);
      if (Status s = db.defer("INSERT INTO nodes (id, name) SELECT ix + ?, nm FROM (" +
                                  std::string(db.dialect().indexed_texts_from_json) + ") AS listed",
                              {static_cast<int64_t>(first), dump(names)});
          !s) {
        return s;
      }
    }
    changed = true;
    db.node_count = 0;  // read again after the commit
    return Ok{};
  });
}

Result<std::string> SqlStore::machine_spec() {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return sql::single_statement(db, "machine_spec", [&]() -> Result<std::string> {
    Result<std::optional<std::string>> spec = sql::meta_text(db, "machine_spec");
    if (!spec) return spec.error();
    if (!*spec) {
      return db.fail(Error::Code::kNotFound, "the store has no cluster (init_cluster never ran)");
    }
    return **spec;
  });
}

Result<int64_t> SqlStore::version() {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return sql::single_statement(db, "version", [&]() -> Result<int64_t> {
    Result<Rows> rows = db.query("SELECT value FROM meta WHERE key = 'version'");
    if (!rows) return rows.error();
    if (rows->empty()) return db.fail(Error::Code::kInternal, "the meta table has no version row");
    return rows->int64(0, 0);
  });
}

Result<StoreHead> SqlStore::head() {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return sql::single_statement(db, "head", [&]() -> Result<StoreHead> {
    Result<Rows> rows = db.query(
        "SELECT (SELECT value FROM meta WHERE key = 'version'), "
        "(SELECT coalesce(max(seq), 0) FROM events)");
    if (!rows) return rows.error();
    if (rows->empty() || rows->is_null(0, 0)) {
      return db.fail(Error::Code::kInternal, "the meta table has no version row");
    }
    return StoreHead{rows->int64(0, 0), rows->int64(0, 1)};
  });
}

Result<StoreChanges> SqlStore::changes(int64_t after, int limit) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return sql::single_statement(db, "changes", [&]() -> Result<StoreChanges> {
    if (limit < 0) {
      return db.fail(Error::Code::kInvalidArgument,
                     "a negative event limit (" + std::to_string(limit) + ")");
    }
    // The head on every row, and one row with no event when there is none to read.
    Result<Rows> rows = db.query(
        "SELECT h.version, h.last, e.seq, e.time, e.kind, e.job, e.node, e.detail FROM "
        "(SELECT (SELECT value FROM meta WHERE key = 'version') AS version, "
        "(SELECT coalesce(max(seq), 0) FROM events) AS last) AS h LEFT JOIN "
        "(SELECT seq, time, kind, job, node, detail FROM events WHERE seq > ? ORDER BY seq "
        "LIMIT ?) AS e ON 1 = 1 ORDER BY e.seq",
        {after, limit});
    if (!rows) return rows.error();
    if (rows->empty() || rows->is_null(0, 0)) {
      return db.fail(Error::Code::kInternal, "the meta table has no version row");
    }
    StoreChanges changes;
    changes.head = StoreHead{rows->int64(0, 0), rows->int64(0, 1)};
    for (size_t r = 0; r < rows->size(); ++r) {
      if (rows->is_null(r, 2)) continue;
      changes.events.push_back(StoredEvent{rows->int64(r, 2), rows->real(r, 3), rows->text(r, 4),
                                           rows->int64(r, 5), rows->text(r, 6), rows->text(r, 7)});
    }
    return changes;
  });
}

Result<bool> SqlStore::hold_lease(std::string_view holder, Seconds now, Seconds ttl) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(
      db, "hold_lease", true,
      [&](bool& changed) -> Result<bool> {
        if (holder.empty() || !is_utf8(holder)) {
          return db.fail(Error::Code::kInvalidArgument, "a lease holder needs a UTF-8 name");
        }
        // The previous holder, for the log, read with the row locked; then one statement that
        // takes the lease only from its holder or once it has run out (two controllers that find
        // no row at once cannot both insert one).
        Result<std::vector<Rows>> rows = db.query_batch(std::vector<sql::Statement>{
            {"SELECT holder FROM leases WHERE role = ?" + std::string(db.dialect().for_update),
             {sql::kSchedulerRole}},
            {"INSERT INTO leases (role, holder, expires) VALUES (?, ?, ?) "
             "ON CONFLICT (role) DO UPDATE SET holder = excluded.holder, "
             "expires = excluded.expires "
             "WHERE leases.holder = excluded.holder OR leases.expires <= ? RETURNING holder",
             {sql::kSchedulerRole, holder, now + ttl, now}}});
        if (!rows) return rows.error();
        if ((*rows)[1].empty()) return false;  // another holder has it unexpired
        std::string previous = (*rows)[0].empty() ? "" : (*rows)[0].text(0, 0);
        if (previous != holder) {
          std::string detail = std::string(holder) + " took the scheduler lease";
          if (!previous.empty()) detail += " from " + previous;
          sql::log_event(db, now, "scheduler", 0, "", detail);
        }
        changed = true;
        return true;
      },
      sql::Counting::kUncounted);
}

Status SqlStore::release_lease(std::string_view holder) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(
      db, "release_lease", true,
      [&](bool& changed) -> Status {
        Result<Rows> released =
            db.query("UPDATE leases SET expires = 0 WHERE role = ? AND holder = ?",
                     {sql::kSchedulerRole, holder});
        if (!released) return released.error();
        changed = released->affected() > 0;
        return Ok{};
      },
      sql::Counting::kUncounted);
}

Result<std::vector<std::string>> SqlStore::check_in(std::string_view controller, Seconds now,
                                                    Seconds ttl) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  if (controller.empty() || !is_utf8(controller))
    return fail(Error::Code::kInvalidArgument, "a controller needs a UTF-8 name");
  // Single statements, in no transaction, bumping no version: a check-in wakes no controller.
  Status written = sql::single_statement(db, "check_in", [&]() -> Status {
    Result<Rows> rows = db.query(
        "INSERT INTO leases (role, holder, expires) VALUES (?, ?, ?) "
        "ON CONFLICT (role) DO UPDATE SET holder = excluded.holder, expires = excluded.expires",
        {std::string(sql::kControllerRolePrefix) + std::string(controller), controller, now + ttl});
    if (!rows) return rows.error();
    return Ok{};
  });
  if (!written) return written.error();
  return sql::single_statement(db, "check_in", [&]() -> Result<std::vector<std::string>> {
    Result<Rows> rows =
        db.query("SELECT holder FROM leases WHERE role LIKE ? AND expires > ? ORDER BY holder",
                 {std::string(sql::kControllerRolePrefix) + "%", now});
    if (!rows) return rows.error();
    std::vector<std::string> live;
    for (size_t r = 0; r < rows->size(); ++r) live.push_back(rows->text(r, 0));
    return live;
  });
}

Result<AdoptedJobs> SqlStore::adopt_jobs(std::string_view controller, Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(
      db, "adopt_jobs", true,
      [&](bool& changed) -> Result<AdoptedJobs> {
        if (controller.empty() || !is_utf8(controller)) {
          return db.fail(Error::Code::kInvalidArgument, "a controller needs a UTF-8 name");
        }
        // An unfinished job whose owner has no unexpired check-in (or that has no owner).
        Result<Rows> rows = db.query(
            "UPDATE jobs SET owner = ? WHERE state IN ('PD', 'R', 'S', 'CG') AND owner <> ? AND "
            "NOT EXISTS (SELECT 1 FROM leases WHERE leases.role = ? || jobs.owner AND "
            "leases.expires > ?) RETURNING id, state",
            {controller, controller, sql::kControllerRolePrefix, now});
        if (!rows) return rows.error();
        AdoptedJobs adopted;
        for (size_t r = 0; r < rows->size(); ++r)
          (rows->text(r, 1) == "PD" ? adopted.pending : adopted.holding)
              .push_back(rows->int64(r, 0));
        if (adopted.pending.empty() && adopted.holding.empty()) return adopted;
        std::sort(adopted.pending.begin(), adopted.pending.end());
        std::sort(adopted.holding.begin(), adopted.holding.end());
        changed = true;
        std::string detail = std::string(controller) + " adopted";
        if (!adopted.pending.empty())
          detail += " pending jobs " + format_id_ranges(adopted.pending);
        if (!adopted.holding.empty())
          detail += std::string(adopted.pending.empty() ? "" : " and") + " started jobs " +
                    format_id_ranges(adopted.holding) + " (launched again)";
        sql::log_event(db, now, "adopt", 0, "", detail + " of controllers no longer checked in");
        return adopted;
      },
      sql::Counting::kUncounted);
}

Result<std::optional<std::string>> SqlStore::core_state() {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return sql::single_statement(db, "core_state", [&]() -> Result<std::optional<std::string>> {
    return sql::meta_text(db, "core_state");
  });
}

Result<std::vector<StoredEvent>> SqlStore::events(int64_t after, int limit) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return sql::single_statement(db, "events", [&]() -> Result<std::vector<StoredEvent>> {
    std::vector<StoredEvent> events;
    if (limit < 0) {
      return db.fail(Error::Code::kInvalidArgument,
                     "a negative event limit (" + std::to_string(limit) + ")");
    }
    Result<Rows> rows = db.query(
        "SELECT seq, time, kind, job, node, detail FROM events WHERE seq > ? ORDER BY seq "
        "LIMIT ?",
        {after, limit});
    if (!rows) return rows.error();
    for (size_t r = 0; r < rows->size(); ++r) {
      events.push_back(StoredEvent{rows->int64(r, 0), rows->real(r, 1), rows->text(r, 2),
                                   rows->int64(r, 3), rows->text(r, 4), rows->text(r, 5)});
    }
    return events;
  });
}

}  // namespace trellis
