#include "store/sqlite_session.h"

#include <sqlite3.h>

#include <filesystem>
#include <functional>
#include <map>

namespace trellis::sql {
namespace {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;
using StmtHandle = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

// The kind of failure an SQLite result code is. Busy, locked, unopenable, full or failing disks
// may clear up (kUnavailable); a refused constraint is a conflict with the data (kDoesNotFitNow);
// everything else is a library failure or a broken file.
Error::Code code_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PROTOCOL:
      return Error::Code::kUnavailable;
    case SQLITE_CONSTRAINT:
      return Error::Code::kDoesNotFitNow;
    case SQLITE_NOTADB:
      return Error::Code::kInvalidArgument;  // the wrong file
    default:
      return Error::Code::kInternal;
  }
}

class SqliteSession final : public Session {
 public:
  SqliteSession(const std::string& path, DbHandle db, bool read_only, int busy_timeout_ms)
      : Session("store " + path, read_only),
        db_(std::move(db)),
        busy_timeout_ms_(busy_timeout_ms) {}
  ~SqliteSession() override {
    statements_.clear();  // finalized before the handle closes
  }

  const Dialect& dialect() const override {
    static const Dialect kSqlite{
        "SQLite",
        "SELECT value FROM json_each(?)",
        "SELECT value FROM json_each(?)",
        " IN (SELECT value FROM json_each(?))",
        " IN (SELECT value FROM json_each(?))",
        "SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'), "
        "(SELECT count(*) FROM sqlite_master WHERE type = 'table')",
        "",
        "",
        "SELECT key AS ix, value AS nm FROM json_each(?)",
        "INSERT INTO events (seq, time, kind, job, node, detail) "
        "SELECT (SELECT coalesce(max(seq), 0) FROM events) + key + 1, "
        "json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), "
        "json_extract(value, '$[3]'), json_extract(value, '$[4]') FROM json_each(?) ORDER BY key",
        "json_each(?) AS e",
        "json_extract(e.value, '$[{i}]')",
        "INTEGER",
        "REAL",
        " + 0 IN (SELECT value FROM json_each(?))",
        "",  // insert_job_logged: no INSERT inside WITH
        "",  // record_exits_logged: the same
        "",  // stop_job_logged: the same
    };
    return kSqlite;
  }

  using Session::query;
  Result<Rows> query(std::string_view sql, std::span<const Param> params) override {
    Result<sqlite3_stmt*> prepared = prepare(sql);
    if (!prepared) return prepared.error();
    sqlite3_stmt* stmt = *prepared;
    // Reset on every way out, keeping the statement prepared.
    struct Resetter {
      sqlite3_stmt* stmt;
      ~Resetter() {
        sqlite3_reset(stmt);
        sqlite3_clear_bindings(stmt);
      }
    } resetter{stmt};
    int index = 0;
    for (const Param& p : params) {
      ++index;
      int rc = SQLITE_OK;
      if (const auto* i = std::get_if<int64_t>(&p.value())) {
        rc = sqlite3_bind_int64(stmt, index, *i);
      } else if (const auto* d = std::get_if<double>(&p.value())) {
        rc = sqlite3_bind_double(stmt, index, *d);
      } else {
        const std::string& s = std::get<std::string>(p.value());
        rc = sqlite3_bind_text64(stmt, index, s.data(), s.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      }
      if (rc != SQLITE_OK) return error(stmt, rc);
    }
    Rows rows;
    int columns = sqlite3_column_count(stmt);
    for (;;) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return error(stmt, rc);
      std::vector<Rows::Cell> cells(columns);
      for (int c = 0; c < columns; ++c) {
        switch (sqlite3_column_type(stmt, c)) {
          case SQLITE_INTEGER:
            cells[c] = static_cast<int64_t>(sqlite3_column_int64(stmt, c));
            break;
          case SQLITE_FLOAT:
            cells[c] = sqlite3_column_double(stmt, c);
            break;
          case SQLITE_NULL:
            break;
          default: {
            const unsigned char* p = sqlite3_column_text(stmt, c);
            cells[c] =
                p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt, c))
                  : std::string();
          }
        }
      }
      rows.add_row(std::move(cells));
    }
    rows.set_affected(sqlite3_stmt_readonly(stmt) ? 0 : sqlite3_changes(db_.get()));
    return rows;
  }

  Result<std::vector<Rows>> query_batch(std::span<const Statement> statements) override {
    std::vector<Rows> out;
    for (const Statement& s : statements) {
      Result<Rows> rows = query(s.sql, s.params);
      if (!rows) return rows.error();
      out.push_back(std::move(*rows));
    }
    return out;
  }

  Status defer(std::string_view sql, std::span<const Param> params) override {
    Result<Rows> rows = query(sql, params);
    if (!rows) return rows.error();
    return Ok{};
  }

  Status exec_script(std::string_view sql, std::string_view what) override {
    std::string text(sql);
    int rc = sqlite3_exec(db_.get(), text.c_str(), nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return sql_error(rc, what);
    return Ok{};
  }

  Status begin(bool write) override {
    rollback();  // nothing is ever left open, but a failed commit must not wedge the session
    Result<Rows> r = query(write ? "BEGIN IMMEDIATE" : "BEGIN");
    if (!r) {
      if ((sqlite3_errcode(db_.get()) & 0xff) == SQLITE_BUSY) {
        return fail(Error::Code::kUnavailable,
                    "the database is locked by another connection (waited " +
                        std::to_string(busy_timeout_ms_) + " ms)");
      }
      return r.error();
    }
    return Ok{};
  }
  Status commit() override {
    Result<Rows> r = query("COMMIT");
    if (!r) return r.error();
    return Ok{};
  }
  void rollback() override {
    if (!sqlite3_get_autocommit(db_.get())) (void)query("ROLLBACK");
  }

 private:
  Result<sqlite3_stmt*> prepare(std::string_view sql) {
    auto it = statements_.find(sql);
    if (it == statements_.end()) {
      sqlite3_stmt* raw = nullptr;
      int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                  SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
      StmtHandle stmt(raw);
      if (rc != SQLITE_OK) {
        return sql_error(rc, "cannot prepare '" + std::string(sql.substr(0, 60)) + "'");
      }
      it = statements_.emplace(std::string(sql), std::move(stmt)).first;
    }
    return it->second.get();
  }

  // A failure of SQLite, with its own message.
  Error sql_error(int rc, std::string_view what) const {
    if ((rc & 0xff) == SQLITE_NOTADB) {
      return fail(code_of(rc), "the file is not an SQLite database");
    }
    std::string detail = sqlite3_errmsg(db_.get());
    if (detail.empty() || detail == "not an error") detail = sqlite3_errstr(rc);
    return fail(code_of(rc), std::string(what) + ": " + detail);
  }
  Error error(sqlite3_stmt* stmt, int rc) const {
    std::string sql = sqlite3_sql(stmt);
    if (sql.size() > 60) sql = sql.substr(0, 57) + "...";
    return sql_error(rc, "'" + sql + "' failed");
  }

  DbHandle db_;
  int busy_timeout_ms_;
  std::map<std::string, StmtHandle, std::less<>> statements_;
};

}  // namespace

Result<std::unique_ptr<Session>> open_sqlite_session(const std::string& path, bool read_only,
                                                     int busy_timeout_ms) {
  if (path.empty()) return fail("the store's path is empty");
  std::error_code ec;
  if (read_only && !std::filesystem::exists(path, ec)) {
    return fail(Error::Code::kNotFound,
                "store " + path + " does not exist (a read-only open never creates one)");
  }
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  // SQLite counts every allocation for its memory statistics, under a global mutex, unless told
  // not to before its first use; the store reads no statistics. (A call after SQLite's first use
  // in the process is refused and changes nothing.)
  static const int memory_statistics_off = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)memory_statistics_off;
  sqlite3* raw = nullptr;
  // NOMUTEX: the store's own mutex serialises the connection.
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  DbHandle handle(raw);
  if (rc != SQLITE_OK) {
    std::string detail = handle ? sqlite3_errmsg(handle.get()) : sqlite3_errstr(rc);
    return fail(Error::Code::kUnavailable, "cannot open store " + path + ": " + detail);
  }
  sqlite3_extended_result_codes(handle.get(), 1);
  sqlite3_busy_timeout(handle.get(), busy_timeout_ms);
  auto db = std::make_unique<SqliteSession>(path, std::move(handle), read_only, busy_timeout_ms);
  db->set_operation("open");
  // WAL lets readers in other processes read while the controller writes; it is a property of
  // the file, so a read-only connection finds it set. NORMAL skips the fsync of each commit.
  if (!read_only) {
    if (Status s = db->exec_script("PRAGMA journal_mode = WAL", "cannot set WAL mode"); !s) {
      return s.error();
    }
  }
  // Temporary b-trees (ORDER BY, IN lists) in memory: they are small and live for one statement.
  if (Status s = db->exec_script(
          "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY",
          "cannot configure the connection");
      !s) {
    return s.error();
  }
  return std::unique_ptr<Session>(std::move(db));
}

}  // namespace trellis::sql
