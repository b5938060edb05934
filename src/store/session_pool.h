// SessionPool: the database sessions of one store object, lent one per call. A PostgreSQL store
// keeps a few (a controller's scheduling pass, its grouped submissions and its grouped exit
// reports each run on a session of their own instead of queuing behind one another); a SQLite
// store keeps one. Sessions beyond the first are opened when every open one is busy, up to the
// pool's limit, and kept; while the limit is reached a caller waits for a session to come back.
//
// Several sessions of one process are to the database what several controllers are: each
// transaction locks the rows it checks and only the log's append is serial (sql_session.h), so
// what holds between controllers (the log gap-free and in commit order, no node given twice)
// holds between the sessions of a pool.
//
//   SessionPool pool(std::move(first), [url] { return open_postgres_session(url, false); }, 4);
//   SessionPool::Lease db = pool.acquire();  // a session of its own until `db` goes away
//   db->query("SELECT 1");
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "store/sql_session.h"

namespace trellis::sql {

class SessionPool {
 public:
  // Opens another session like the first; a failure leaves the pool at the sessions it has.
  using Opener = std::function<Result<std::unique_ptr<Session>>()>;

  // A pool of `first` alone when `open_more` is empty or `most` is 1.
  SessionPool(std::unique_ptr<Session> first, Opener open_more, int most);
  SessionPool(const SessionPool&) = delete;
  SessionPool& operator=(const SessionPool&) = delete;

  // A session lent to one caller until it is destroyed.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Session& operator*() const { return *session_; }
    Session* operator->() const { return session_; }

   private:
    friend class SessionPool;
    Lease(SessionPool* pool, size_t slot, Session* session)
        : pool_(pool), slot_(slot), session_(session) {}
    SessionPool* pool_;
    size_t slot_;
    Session* session_;
  };

  // An idle session, a new one (below the limit), or the first to come back. Never fails: a
  // session that cannot be opened now is not waited for, and a lent session reconnects itself.
  Lease acquire();

  // Runs `visit` on each session in turn, each while no one else uses it (the counters).
  void for_each(const std::function<void(const Session&)>& visit);

  // The first session (its name; the schema's checks at open time).
  Session& first() const { return *slots_.front()->session; }

  // How many sessions are open.
  size_t size() const;

 private:
  struct Slot {
    std::unique_ptr<Session> session;  // null while being opened
    bool busy = false;
  };
  void give_back(size_t slot);

  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<Slot>> slots_;
  Opener open_more_;
  size_t most_;
};

}  // namespace trellis::sql
