// The change feed of a PostgreSQL store (postgres_session.h): LISTEN on a connection of its own.
#include <pqxx/pqxx>

#include "store/postgres_session.h"

namespace trellis::sql {
namespace {

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

}  // namespace trellis::sql
