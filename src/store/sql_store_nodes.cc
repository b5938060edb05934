// The SQL store's nodes (sql_store.h): the listing, agents' registrations and heartbeats, nodes
// found down, drains. A change to many nodes is one statement and one event, whose node field is
// a hostlist of the nodes that changed ("n[0-1023]"), not one of each per node.
#include <map>
#include <set>

#include "core/hostlist.h"
#include "store/json_fields.h"
#include "store/sql_rows.h"
#include "store/sql_store.h"

namespace trellis {

using sql::Rows;
using sql::Session;
using sql::transaction;
using namespace json_fields;  // NOLINT

namespace {

std::string json_texts(const std::vector<std::string>& texts) {
  nlohmann::json list = nlohmann::json::array();
  for (const std::string& t : texts) list.push_back(t);
  return dump(list);
}

std::vector<std::string> names_of(const Rows& rows, int column) {
  std::vector<std::string> names;
  for (size_t r = 0; r < rows.size(); ++r) names.push_back(rows.text(r, column));
  return names;
}

}  // namespace

Result<std::vector<StoredNode>> SqlStore::list_nodes() {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "list_nodes", false, [&](bool&) -> Result<std::vector<StoredNode>> {
    std::vector<StoredNode> nodes;
    Result<std::vector<Rows>> read = db.query_batch(std::vector<sql::Statement>{
        {"SELECT id, name, up, drained, agent, last_heartbeat, reason FROM nodes ORDER BY id", {}},
        {"SELECT node_id, job_id FROM allocations ORDER BY node_id, job_id", {}}});
    if (!read) return read.error();
    const Rows& rows = (*read)[0];
    for (size_t r = 0; r < rows.size(); ++r) {
      StoredNode n;
      n.id = rows.integer(r, 0);
      n.name = rows.text(r, 1);
      n.up = rows.integer(r, 2) != 0;
      n.drained = rows.integer(r, 3) != 0;
      n.agent = rows.text(r, 4);
      n.last_heartbeat = rows.real(r, 5);
      n.reason = rows.text(r, 6);
      nodes.push_back(std::move(n));
    }
    // Node ids are 0..n-1, so an id is an index into `nodes`.
    const Rows& held = (*read)[1];
    for (size_t r = 0; r < held.size(); ++r) {
      int64_t node = held.int64(r, 0);
      if (node < 0 || node >= static_cast<int64_t>(nodes.size()) || nodes[node].id != node) {
        return db.fail(Error::Code::kInternal,
                       "an allocation names node " + std::to_string(node) + ", not in nodes");
      }
      nodes[node].jobs.push_back(held.int64(r, 1));
    }
    return nodes;
  });
}

Status SqlStore::nodes_seen(const std::vector<std::string>& names, std::string_view agent,
                            Seconds now) {
  if (names.empty()) return Ok{};
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  // One statement outside any transaction: nodes up on this agent only have their time changed,
  // which no cache depends on, so it bumps no version and wakes no controller.
  Result<int64_t> beat = sql::single_statement(db, "nodes_seen", [&]() -> Result<int64_t> {
    Result<Rows> updated =
        db.query("UPDATE nodes SET last_heartbeat = ? WHERE name " +
                     std::string(db.dialect().texts_in) + " AND up = 1 AND agent = ?",
                 {now, json_texts(names), agent});
    if (!updated) return updated.error();
    return updated->affected();
  });
  if (!beat) return beat.error();
  if (*beat == static_cast<int64_t>(names.size())) return Ok{};
  // Why a node was not updated: the first one, named.
  return sql::single_statement(db, "nodes_seen", [&]() -> Status {
    Result<Rows> rows = db.query(
        "SELECT name, up, agent FROM nodes WHERE name " + std::string(db.dialect().texts_in) + "",
        {json_texts(names)});
    if (!rows) return rows.error();
    std::map<std::string, std::pair<bool, std::string>> found;
    for (size_t r = 0; r < rows->size(); ++r)
      found[rows->text(r, 0)] = {rows->integer(r, 1) != 0, rows->text(r, 2)};
    for (const std::string& name : names) {
      auto node = found.find(name);
      if (node == found.end())
        return db.fail(Error::Code::kNotFound, "no node '" + name + "' in the cluster");
      if (!node->second.first)
        return db.fail(Error::Code::kNotFound,
                       "node " + name + " is down: register again with the tasks it runs");
      if (node->second.second != agent)
        return db.fail(Error::Code::kNotFound, "node " + name + " is registered to " +
                                                   node->second.second + ", not " +
                                                   std::string(agent) + ": register first");
    }
    return db.fail(Error::Code::kInternal, "a heartbeat changed fewer nodes than it named");
  });
}

Result<std::vector<RunningTask>> SqlStore::register_nodes(const std::vector<std::string>& names,
                                                          std::string_view agent,
                                                          const std::vector<RunningTask>& running,
                                                          Seconds now) {
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(
      db, "register_nodes", true, [&](bool& changed) -> Result<std::vector<RunningTask>> {
        if (!is_utf8(agent)) {
          return db.fail(Error::Code::kInvalidArgument, "the agent's address is not valid UTF-8");
        }
        const sql::Dialect& d = db.dialect();
        // The nodes, locked, and the attempts that run on the nodes where the agent has
        // processes: one round trip. A process is current while its job runs that attempt on
        // that node (R, CG or S, with the node still allocated to it); any other is left from an
        // attempt that ended.
        std::vector<std::string> task_nodes;
        for (const RunningTask& task : running) task_nodes.push_back(task.node);
        Result<std::vector<Rows>> read = db.query_batch(std::vector<sql::Statement>{
            {"SELECT id, name, up, agent FROM nodes WHERE name " + std::string(d.texts_in) +
                 " ORDER BY id" + std::string(d.for_update),
             {json_texts(names)}},
            {"SELECT jobs.id, jobs.attempt, nodes.name FROM jobs JOIN allocations ON "
             "allocations.job_id = jobs.id JOIN nodes ON nodes.id = allocations.node_id "
             "WHERE jobs.state IN ('R', 'CG', 'S') AND nodes.name " +
                 std::string(d.texts_in) + "",
             {json_texts(task_nodes)}}});
        if (!read) return read.error();
        std::map<std::string, std::pair<int64_t, bool>> node_of;  // name -> id, up
        std::map<std::string, std::string> agent_of;              // name -> its agent so far
        const Rows& nodes = (*read)[0];
        for (size_t r = 0; r < nodes.size(); ++r) {
          node_of[nodes.text(r, 1)] = {nodes.int64(r, 0), nodes.integer(r, 2) != 0};
          agent_of[nodes.text(r, 1)] = nodes.text(r, 3);
        }
        for (const std::string& name : names)
          if (!node_of.count(name))
            return db.fail(Error::Code::kNotFound, "no node '" + name + "' in the cluster");
        std::set<RunningTask, bool (*)(const RunningTask&, const RunningTask&)> current(
            [](const RunningTask& a, const RunningTask& b) {
              return std::tie(a.job, a.attempt, a.node) < std::tie(b.job, b.attempt, b.node);
            });
        const Rows& attempts = (*read)[1];
        for (size_t r = 0; r < attempts.size(); ++r)
          current.insert({attempts.int64(r, 0), attempts.integer(r, 1), attempts.text(r, 2)});
        std::vector<RunningTask> stale;
        std::set<std::string> held_down;
        for (const RunningTask& task : running) {
          if (current.count(task)) continue;
          stale.push_back(task);
          held_down.insert(task.node);
        }
        // Up they come, in one statement, except a down node where a stale process still runs;
        // coming up clears the reason it was down, but not an administrator's drain reason.
        // Logged: the nodes that were down, and those up under another address (an agent
        // restarted before its nodes were found down), so that every controller pings and
        // launches at the address the agent has now.
        std::vector<int64_t> coming;
        std::vector<std::string> were_down;
        for (const std::string& name : names) {
          auto [id, was_up] = node_of[name];
          if (held_down.count(name) && !was_up) continue;
          coming.push_back(id);
          if (!was_up || agent_of[name] != agent) were_down.push_back(name);
        }
        if (!coming.empty()) {
          if (Status s =
                  db.defer("UPDATE nodes SET up = 1, agent = ?, last_heartbeat = ?, "
                           "reason = CASE WHEN up = 0 AND drained = 0 THEN '' ELSE reason END "
                           "WHERE id " +
                               std::string(d.ints_in) + "",
                           {agent, now, encode_ints(coming)});
              !s) {
            return s.error();
          }
        }
        if (!were_down.empty())
          sql::log_event(db, now, "node_up", 0, format_names(were_down), agent);
        changed = true;
        return stale;
      });
}

Status SqlStore::nodes_down(const std::vector<NodeId>& nodes, std::string_view reason,
                            Seconds now) {
  if (nodes.empty()) return Ok{};
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "nodes_down", true, [&](bool& changed) -> Status {
    if (!is_utf8(reason)) {
      return db.fail(Error::Code::kInvalidArgument, "the reason is not valid UTF-8");
    }
    if (Status s = sql::check_node_ids(db, nodes); !s) return s;
    Result<Rows> down =
        db.query("UPDATE nodes SET up = 0, reason = ? WHERE id " +
                     std::string(db.dialect().ints_in) + " AND up = 1 RETURNING name",
                 {reason, encode_ints(nodes)});
    if (!down) return down.error();
    if (down->empty()) return Ok{};  // down already
    sql::log_event(db, now, "node_down", 0, format_names(names_of(*down, 0)), reason);
    changed = true;
    return Ok{};
  });
}

Status SqlStore::set_drained(const std::vector<NodeId>& nodes, bool drained,
                             std::string_view reason, Seconds now) {
  if (nodes.empty()) return Ok{};
  sql::SessionPool::Lease lease = pool_.acquire();
  Session& db = *lease;
  return transaction(db, "set_drained", true, [&](bool& changed) -> Status {
    if (!is_utf8(reason)) {
      return db.fail(Error::Code::kInvalidArgument, "the reason is not valid UTF-8");
    }
    if (Status s = sql::check_node_ids(db, nodes); !s) return s;
    const std::string ids = "id " + std::string(db.dialect().ints_in) + "";
    // Draining records the reason; resuming an up node clears it, a down node keeps its own.
    Result<Rows> changed_nodes =
        drained ? db.query("UPDATE nodes SET drained = 1, reason = ? WHERE " + ids +
                               " AND drained = 0 RETURNING name",
                           {reason, encode_ints(nodes)})
                : db.query(
                      "UPDATE nodes SET drained = 0, "
                      "reason = CASE WHEN up = 1 THEN '' ELSE reason END WHERE " +
                          ids + " AND drained = 1 RETURNING name",
                      {encode_ints(nodes)});
    if (!changed_nodes) return changed_nodes.error();
    if (changed_nodes->empty()) return Ok{};  // in that state already
    sql::log_event(db, now, drained ? "drain" : "resume", 0,
                   format_names(names_of(*changed_nodes, 0)), reason);
    changed = true;
    return Ok{};
  });
}

}  // namespace trellis
