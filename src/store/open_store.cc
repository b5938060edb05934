// open_store() and open_change_feed(): pick the engine from the URL (state_store.h).
#include "store/postgres_session.h"
#include "store/sql_store.h"
#include "store/sqlite_session.h"

namespace trellis {
namespace {

// The sessions a PostgreSQL store opens at most: enough for a controller's scheduling pass, its
// grouped submissions, its grouped exit reports and a client's read to run at once.
constexpr int kPostgresSessions = 4;

}  // namespace

Result<std::unique_ptr<StateStore>> open_store(std::string_view url, StoreOptions options) {
  Result<std::unique_ptr<sql::Session>> session = fail("no store");
  if (url.starts_with("sqlite:")) {
    std::string path(url.substr(std::string_view("sqlite:").size()));
    if (path.empty()) return fail("store URL '" + std::string(url) + "' names no file");
    session = sql::open_sqlite_session(path, options.read_only);
  } else if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    session = sql::open_postgres_session(std::string(url), options.read_only);
  } else if (url.find("://") != std::string_view::npos) {
    return fail("store URL '" + std::string(url) + "' has an unknown scheme '" +
                std::string(url.substr(0, url.find("://"))) +
                "' (expected sqlite:PATH, a path ending in .db, or postgresql://...)");
  } else if (url.ends_with(".db")) {
    session = sql::open_sqlite_session(std::string(url), options.read_only);
  } else {
    return fail("store URL '" + std::string(url) +
                "' is neither sqlite:PATH, a path ending in .db, nor postgresql://...");
  }
  if (!session) return session.error();
  sql::SessionPool::Opener open_more;
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    open_more = [url = std::string(url), read_only = options.read_only] {
      return sql::open_postgres_session(url, read_only);
    };
  }
  Result<std::unique_ptr<SqlStore>> store =
      SqlStore::open(std::move(*session), std::move(open_more), kPostgresSessions);
  if (!store) return store.error();
  return std::unique_ptr<StateStore>(std::move(*store));
}

Result<std::unique_ptr<ChangeFeed>> open_change_feed(std::string_view url) {
  if (url.starts_with("postgresql://") || url.starts_with("postgres://"))
    return sql::open_postgres_change_feed(std::string(url));
  return std::unique_ptr<ChangeFeed>();
}

}  // namespace trellis
