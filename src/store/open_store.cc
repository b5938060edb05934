// open_store(): picks the backend from the URL (state_store.h).
#include "store/sqlite_store.h"

namespace trellis {

Result<std::unique_ptr<StateStore>> open_store(std::string_view url, StoreOptions options) {
  std::string path;
  if (url.starts_with("sqlite:")) {
    path = url.substr(std::string_view("sqlite:").size());
    if (path.empty()) return fail("store URL '" + std::string(url) + "' names no file");
  } else if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    return fail("store URL '" + std::string(url) +
                "': PostgreSQL (postgresql://) is not supported yet in this build; use "
                "sqlite:PATH");
  } else if (url.find("://") != std::string_view::npos) {
    return fail("store URL '" + std::string(url) + "' has an unknown scheme '" +
                std::string(url.substr(0, url.find("://"))) +
                "' (expected sqlite:PATH or a path ending in .db)");
  } else if (url.ends_with(".db")) {
    path = url;
  } else {
    return fail("store URL '" + std::string(url) +
                "' is neither sqlite:PATH nor a path ending in .db");
  }
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::open(path, options);
  if (!store) return store.error();
  return std::unique_ptr<StateStore>(std::move(*store));
}

}  // namespace trellis
