#include "store/sqlite_connection.h"

namespace trellis {
namespace sqlite {

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
    case SQLITE_NOTADB:
      return Error::Code::kInvalidArgument;  // the wrong file
    default:
      return Error::Code::kInternal;
  }
}

Status run(Connection& db, std::string_view sql) {
  Result<Statement> s = db.prepare(sql);
  if (!s) return s.error();
  return s->run();
}

void rollback(Connection& db) {
  if (!sqlite3_get_autocommit(db.db())) (void)run(db, "ROLLBACK");
}

}  // namespace sqlite

Result<sqlite::Statement> SqliteStore::Connection::prepare(std::string_view sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    sqlite::StmtHandle stmt(raw);
    if (rc != SQLITE_OK) {
      return sql_error(rc, "cannot prepare '" + std::string(sql.substr(0, 60)) + "'");
    }
    it = statements_.emplace(std::string(sql), std::move(stmt)).first;
  }
  return sqlite::Statement(this, it->second.get());
}

}  // namespace trellis
