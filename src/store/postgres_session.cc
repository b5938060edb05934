#include "store/postgres_session.h"

#include <chrono>
#include <map>
#include <pqxx/pqxx>
#include <thread>

namespace trellis::sql {
namespace {

// The advisory lock that orders writers ("trel" in ASCII).
constexpr int64_t kWriteLockKey = 0x7472656c;
// Reconnection: attempts, first pause, longest pause.
constexpr int kConnectAttempts = 8;
constexpr auto kFirstPause = std::chrono::milliseconds(50);
constexpr auto kLongestPause = std::chrono::milliseconds(1000);

// `sql` with its '?' placeholders numbered $1, $2, ... as PostgreSQL wants them ('?' inside a
// quoted string or identifier is left alone).
std::string number_placeholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int next = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote) {
      if (c == quote) quote = 0;
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += '$' + std::to_string(++next);
    } else {
      out += c;
    }
  }
  return out;
}

// The kind of failure a SQLSTATE is (PostgreSQL's appendix A).
Error::Code code_of(const std::string& state) {
  if (state.starts_with("08") || state.starts_with("57P") || state.starts_with("53") ||
      state.starts_with("40")) {
    return Error::Code::kUnavailable;  // connection, shutdown, resources, serialization
  }
  if (state.starts_with("23")) return Error::Code::kDoesNotFitNow;  // a refused constraint
  if (state == "42501") return Error::Code::kPermissionDenied;      // insufficient privilege
  if (state == "25006") return Error::Code::kInvalidArgument;       // a write when read-only
  return Error::Code::kInternal;
}

using ReadTransaction = pqxx::transaction<pqxx::repeatable_read, pqxx::read_only>;

class PostgresSession final : public Session {
 public:
  PostgresSession(std::string url, bool read_only)
      : Session("store " + redact_password(url), read_only), url_(std::move(url)) {}
  ~PostgresSession() override { rollback(); }

  const Dialect& dialect() const override {
    static const Dialect kPostgres{
        "PostgreSQL",
        "SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(? AS JSON))",
        "SELECT value FROM json_array_elements_text(CAST(? AS JSON))",
        "SELECT (SELECT count(*) FROM information_schema.tables WHERE table_schema = "
        "current_schema() AND table_name = 'meta'), (SELECT count(*) FROM "
        "information_schema.tables WHERE table_schema = current_schema())",
    };
    return kPostgres;
  }

  // Connects (again), with backoff; kUnavailable, with libpq's reason, after the last attempt.
  Status connect() {
    auto pause = kFirstPause;
    std::string last;
    for (int attempt = 1; attempt <= kConnectAttempts; ++attempt) {
      try {
        prepared_.clear();
        conn_.reset();
        conn_ = std::make_unique<pqxx::connection>(url_);
        if (read_only()) {
          pqxx::nontransaction setup(*conn_);
          setup.exec("SET default_transaction_read_only = on");
        }
        lost_ = false;
        return Ok{};
      } catch (const std::exception& e) {
        last = e.what();
        while (!last.empty() && (last.back() == '\n' || last.back() == ' ')) last.pop_back();
      }
      if (attempt < kConnectAttempts) {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, kLongestPause);
      }
    }
    conn_.reset();
    lost_ = true;
    return fail(Error::Code::kUnavailable,
                "cannot connect (" + std::to_string(kConnectAttempts) + " attempts): " + last);
  }

  using Session::query;
  Result<Rows> query(std::string_view sql, std::span<const Param> params) override {
    std::vector<std::string> values;
    values.reserve(params.size());
    for (const Param& p : params) values.push_back(p.to_text());
    return guarded(sql, [&]() -> Result<Rows> {
      if (!conn_) {
        lost_ = true;
        return fail(Error::Code::kUnavailable, "not connected");
      }
      auto it = prepared_.find(sql);
      if (it == prepared_.end()) {
        std::string name = "s" + std::to_string(prepared_.size());
        conn_->prepare(name, number_placeholders(sql));
        it = prepared_.emplace(std::string(sql), name).first;
      }
      pqxx::result result;
      if (txn_) {
        result = txn_->exec_prepared(it->second, pqxx::prepare::make_dynamic_params(values));
      } else {
        pqxx::nontransaction once(*conn_);
        result = once.exec_prepared(it->second, pqxx::prepare::make_dynamic_params(values));
      }
      Rows rows;
      for (const pqxx::row& row : result) {
        std::vector<Rows::Cell> cells(row.size());
        for (pqxx::row::size_type c = 0; c < row.size(); ++c) {
          if (!row[c].is_null()) cells[c] = std::string(row[c].c_str(), row[c].size());
        }
        rows.add_row(std::move(cells));
      }
      rows.set_affected(result.affected_rows());
      return rows;
    });
  }

  Status exec_script(std::string_view sql, std::string_view what) override {
    Result<Rows> r = guarded(what, [&]() -> Result<Rows> {
      if (!conn_) return fail(Error::Code::kUnavailable, "not connected");
      if (txn_) {
        txn_->exec(std::string(sql));
      } else {
        pqxx::nontransaction once(*conn_);
        once.exec(std::string(sql));
      }
      return Rows{};
    });
    if (!r) return r.error();
    return Ok{};
  }

  Status begin(bool write) override {
    rollback();
    if (!conn_ || lost_ || !conn_->is_open()) {
      if (Status s = connect(); !s) return s;
    }
    Result<Rows> r = guarded("BEGIN", [&]() -> Result<Rows> {
      if (write) {
        txn_ = std::make_unique<pqxx::work>(*conn_);
        txn_->exec("SELECT pg_advisory_xact_lock(" + std::to_string(kWriteLockKey) + ")");
      } else {
        txn_ = std::make_unique<ReadTransaction>(*conn_);
      }
      writing_ = write;
      return Rows{};
    });
    if (!r) {
      txn_.reset();
      return r.error();
    }
    return Ok{};
  }

  Status commit() override {
    if (!txn_) return fail(Error::Code::kInternal, "commit() outside a transaction");
    Result<Rows> r = guarded("COMMIT", [&]() -> Result<Rows> {
      txn_->commit();
      return Rows{};
    });
    txn_.reset();
    if (!r) return r.error();
    return Ok{};
  }

  void rollback() override {
    if (!txn_) return;
    try {
      txn_->abort();
    } catch (const std::exception&) {
      lost_ = true;  // the connection is gone; the server rolls the transaction back itself
    }
    txn_.reset();
  }

  bool connection_lost() const override { return lost_; }

  Status announce_change() override {
    Result<Rows> r = guarded("NOTIFY", [&]() -> Result<Rows> {
      txn_->exec("NOTIFY " + std::string(kChangeChannel));
      return Rows{};
    });
    if (!r) return r.error();
    return Ok{};
  }

 private:
  // Runs `body`, turning libpqxx's exceptions into errors that name the statement.
  template <typename Body>
  Result<Rows> guarded(std::string_view what, Body&& body) {
    std::string label(what.substr(0, 60));
    if (what.size() > 60) label = std::string(what.substr(0, 57)) + "...";
    try {
      return body();
    } catch (const pqxx::in_doubt_error& e) {
      lost_ = true;
      return fail(Error::Code::kUnavailable,
                  "the connection was lost during COMMIT: whether it committed is not known");
    } catch (const pqxx::broken_connection& e) {
      lost_ = true;
      return fail(Error::Code::kUnavailable,
                  "'" + label + "': the connection was lost: " + trimmed(e.what()));
    } catch (const pqxx::sql_error& e) {
      Error::Code code = code_of(e.sqlstate());
      if (e.sqlstate().starts_with("08") || e.sqlstate().starts_with("57P")) lost_ = true;
      return fail(code, "'" + label + "' failed: " + trimmed(e.what()));
    } catch (const std::exception& e) {
      if (conn_ && !conn_->is_open()) lost_ = true;
      return fail(lost_ ? Error::Code::kUnavailable : Error::Code::kInternal,
                  "'" + label + "' failed: " + trimmed(e.what()));
    }
  }

  static std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (text.starts_with("ERROR:  ")) text = text.substr(8);
    return text;
  }

  std::string url_;
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<pqxx::transaction_base> txn_;
  bool writing_ = false;
  bool lost_ = false;
  std::map<std::string, std::string, std::less<>> prepared_;  // sql -> statement name
};

// Counts the notifications on the change channel.
class ChangeCounter final : public pqxx::notification_receiver {
 public:
  ChangeCounter(pqxx::connection_base& conn, int& count)
      : pqxx::notification_receiver(conn, std::string(kChangeChannel)), count_(count) {}
  void operator()(const std::string&, int) override { ++count_; }

 private:
  int& count_;
};

class PostgresChangeFeed final : public ChangeFeed {
 public:
  explicit PostgresChangeFeed(std::string url) : url_(std::move(url)) {}
  ~PostgresChangeFeed() override { close(); }

  Result<bool> wait(Seconds timeout) override {
    std::string where = "change feed of store " + redact_password(url_);
    try {
      if (!conn_ || !conn_->is_open()) {
        close();
        conn_ = std::make_unique<pqxx::connection>(url_);
        counter_ = std::make_unique<ChangeCounter>(*conn_, count_);  // LISTEN
      }
      count_ = 0;
      // Notifications that came while this thread was away are delivered at once.
      conn_->get_notifs();
      if (count_ == 0) {
        long whole = static_cast<long>(timeout);
        conn_->await_notification(whole, static_cast<long>((timeout - whole) * 1e6));
      }
      return count_ > 0;
    } catch (const std::exception& e) {
      close();
      return fail(Error::Code::kUnavailable, where + ": " + e.what());
    }
  }

 private:
  void close() {
    counter_.reset();  // before its connection
    conn_.reset();
  }

  std::string url_;
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<ChangeCounter> counter_;
  int count_ = 0;
};

}  // namespace

Result<std::unique_ptr<ChangeFeed>> open_postgres_change_feed(const std::string& url) {
  auto feed = std::make_unique<PostgresChangeFeed>(url);
  // The first wait connects; one of no time at all proves the server is there.
  if (Result<bool> first = feed->wait(0); !first) return first.error();
  return std::unique_ptr<ChangeFeed>(std::move(feed));
}

std::string redact_password(std::string_view url) {
  // scheme://user:password@host... -> scheme://user@host...
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  size_t start = scheme + 3;
  size_t at = url.find('@', start);
  size_t slash = url.find('/', start);
  if (at == std::string_view::npos || (slash != std::string_view::npos && slash < at)) {
    return std::string(url);
  }
  size_t colon = url.find(':', start);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon)) + std::string(url.substr(at));
}

Result<std::unique_ptr<Session>> open_postgres_session(const std::string& url, bool read_only) {
  auto db = std::make_unique<PostgresSession>(url, read_only);
  db->set_operation("open");
  if (Status s = db->connect(); !s) return s.error();
  return std::unique_ptr<Session>(std::move(db));
}

}  // namespace trellis::sql
