// The private PostgreSQL server of bench/postgres_server.h: it starts as an unprivileged user on
// its own port and socket folder, hands out distinct empty databases, its reader role may read but
// not write, and its destructor leaves no server process, no listening port and no folder behind.
#include "bench/postgres_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <string>

namespace trellis::test {
namespace {

namespace fs = std::filesystem;

// Starts a server into `server`, or says why not; the caller skips or fails on that.
std::string start_into(std::unique_ptr<PostgresServer>& server) {
  Result<std::unique_ptr<PostgresServer>> started = PostgresServer::start();
  if (!started) return started.error().message;
  server = std::move(*started);
  return "";
}

// Fails the test when CI requires PostgreSQL, skips it otherwise.
#define TRELLIS_SKIP_OR_FAIL(why)                                                   \
  do {                                                                              \
    if (postgres_required()) FAIL() << "TRELLIS_REQUIRE_POSTGRES=1 but: " << (why); \
    GTEST_SKIP() << (why);                                                          \
  } while (false)

// One server for the tests that only use it.
class PostgresServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { why_not_ = start_into(server_); }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    if (!server_) TRELLIS_SKIP_OR_FAIL(why_not_);
  }
  PostgresServer& server() { return *server_; }

  static std::unique_ptr<PostgresServer> server_;
  static std::string why_not_;
};
std::unique_ptr<PostgresServer> PostgresServerTest::server_;
std::string PostgresServerTest::why_not_;

// The real uid of process `pid` (from /proc), or -1.
long uid_of(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == "Uid:") {
      long uid = -1;
      status >> uid;
      return uid;
    }
    status.ignore(1 << 20, '\n');
  }
  return -1;
}

bool process_exists(pid_t pid) {
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

// Whether a TCP connection to 127.0.0.1:`port` is refused (nothing listens there).
bool connection_refused(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  bool refused = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 &&
                 errno == ECONNREFUSED;
  ::close(fd);
  return refused;
}

// Runs `sql` in a transaction of its own on `url`; the exception's text when it fails, else "".
std::string exec_error(const std::string& url, const std::string& sql) {
  try {
    pqxx::connection connection(url);
    pqxx::work work(connection);
    work.exec(sql);
    work.commit();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

TEST_F(PostgresServerTest, RunsUnprivilegedOnItsOwnPortAndSocketFolder) {
  EXPECT_GT(server().port(), 0);
  ASSERT_GT(server().pid(), 0);
  EXPECT_TRUE(process_exists(server().pid()));
  long uid = uid_of(server().pid());
  EXPECT_NE(uid, 0) << "the server must not run as root";
  if (::geteuid() != 0) {
    EXPECT_EQ(uid, static_cast<long>(::geteuid()));
  }
  // The pid is the server's own (the postmaster), with this server's data directory.
  std::ifstream cmdline("/proc/" + std::to_string(server().pid()) + "/cmdline");
  std::string command((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  EXPECT_NE(command.find(server().dir() + "/data"), std::string::npos) << command;

  Result<std::string> settings =
      server().psql("postgres",
                    "SELECT current_setting('port'), current_setting('listen_addresses'), "
                    "current_setting('unix_socket_directories'), current_setting('fsync'), "
                    "current_user;");
  ASSERT_TRUE(settings) << settings.error().message;
  EXPECT_EQ(*settings,
            std::to_string(server().port()) + "|127.0.0.1|" + server().dir() + "|off|postgres\n");
  EXPECT_TRUE(
      fs::exists(fs::path(server().dir()) / (".s.PGSQL." + std::to_string(server().port()))));
}

TEST_F(PostgresServerTest, PsqlReportsTheFailingStatement) {
  Result<std::string> bad = server().psql("postgres", "SELECT 1;\nSELECT * FROM no_such_table;");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("no_such_table"), std::string::npos) << bad.error().message;
  Result<std::string> nowhere = server().psql("no_such_database", "SELECT 1;");
  ASSERT_FALSE(nowhere);
  EXPECT_NE(nowhere.error().message.find("no_such_database"), std::string::npos);
}

TEST_F(PostgresServerTest, NewDatabasesAreDistinctAndEmpty) {
  Result<std::string> first = server().new_database();
  Result<std::string> second = server().new_database();
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_NE(*first, *second);
  // Over the server's unix socket: its folder, percent-encoded, is the host.
  std::string socket_host;
  for (char c : server().dir()) socket_host += c == '/' ? std::string("%2F") : std::string(1, c);
  EXPECT_EQ(
      first->rfind(
          "postgresql://trellis@" + socket_host + ":" + std::to_string(server().port()) + "/", 0),
      0u)
      << *first;

  for (const std::string& url : {*first, *second}) {
    pqxx::connection connection(url);
    pqxx::work work(connection);
    EXPECT_EQ(work.exec1("SELECT current_user")[0].as<std::string>(), "trellis");
    EXPECT_EQ(work.exec1("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = "
                         "c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', "
                         "'information_schema', 'pg_toast')")[0]
                  .as<int>(),
              0)
        << url << " is not empty";
    EXPECT_FALSE(
        work.exec1("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0].as<bool>());
  }

  // The writer may create and write; what it writes in one database is not in the other.
  EXPECT_EQ(exec_error(*first,
                       "CREATE TABLE jobs (id bigserial PRIMARY KEY, name text);"
                       "INSERT INTO jobs (name) VALUES ('a'), ('b');"),
            "");
  pqxx::connection first_connection(*first);
  pqxx::connection second_connection(*second);
  pqxx::work first_work(first_connection);
  pqxx::work second_work(second_connection);
  EXPECT_NE(first_work.exec1("SELECT current_database()")[0].as<std::string>(),
            second_work.exec1("SELECT current_database()")[0].as<std::string>());
  EXPECT_EQ(first_work.exec1("SELECT count(*) FROM jobs")[0].as<int>(), 2);
  EXPECT_TRUE(second_work.exec1("SELECT to_regclass('jobs') IS NULL")[0].as<bool>());
}

TEST_F(PostgresServerTest, ReaderMaySelectButNotWrite) {
  Result<std::string> url = server().new_database();
  ASSERT_TRUE(url) << url.error().message;
  std::string reader = server().reader_url(*url);
  std::string name = url->substr(url->rfind('/') + 1);
  EXPECT_EQ(reader, url->substr(0, url->find("trellis@")) + "trellis_reader@" +
                        url->substr(url->find('@') + 1));
  EXPECT_TRUE(reader.ends_with("/" + name)) << reader;

  // Tables made after the grants, by the writer and by the superuser (a test's raw setup), in
  // public and in a schema of their own: the default privileges cover them all.
  ASSERT_EQ(exec_error(*url,
                       "CREATE TABLE jobs (id bigserial PRIMARY KEY, name text);"
                       "INSERT INTO jobs (name) VALUES ('a');"
                       "CREATE SCHEMA audit; CREATE TABLE audit.events (what text);"
                       "INSERT INTO audit.events VALUES ('made');"),
            "");
  Result<std::string> setup =
      server().psql(name, "CREATE TABLE nodes (name text); INSERT INTO nodes VALUES ('n1');");
  ASSERT_TRUE(setup) << setup.error().message;

  {
    pqxx::connection connection(reader);
    pqxx::work work(connection);
    EXPECT_EQ(work.exec1("SELECT current_user")[0].as<std::string>(), "trellis_reader");
    EXPECT_EQ(work.exec1("SELECT name FROM jobs")[0].as<std::string>(), "a");
    EXPECT_EQ(work.exec1("SELECT name FROM nodes")[0].as<std::string>(), "n1");
    EXPECT_EQ(work.exec1("SELECT what FROM audit.events")[0].as<std::string>(), "made");
    EXPECT_EQ(work.exec1("SELECT last_value FROM jobs_id_seq")[0].as<int>(), 1);
  }

  for (const char* write :
       {"INSERT INTO jobs (name) VALUES ('b')", "UPDATE jobs SET name = 'c'", "DELETE FROM jobs",
        "INSERT INTO nodes VALUES ('n2')", "INSERT INTO audit.events VALUES ('x')",
        "SELECT nextval('jobs_id_seq')", "CREATE TABLE mine (x int)",
        "CREATE TABLE audit.mine (x int)", "CREATE TEMP TABLE mine (x int)", "CREATE SCHEMA mine",
        "TRUNCATE jobs", "ALTER TABLE jobs ADD COLUMN y int"}) {
    std::string error = exec_error(reader, write);
    EXPECT_TRUE(error.find("permission denied") != std::string::npos ||
                error.find("must be owner") != std::string::npos)
        << write << ": " << (error.empty() ? "succeeded" : error);
  }
  Result<std::string> rows = server().psql(name, "SELECT count(*) FROM jobs;");
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(*rows, "1\n");
}

TEST(PostgresServerLifetimeTest, DestructorStopsTheServerAndRemovesItsFolder) {
  std::unique_ptr<PostgresServer> server;
  if (std::string why = start_into(server); !server) TRELLIS_SKIP_OR_FAIL(why);
  pid_t pid = server->pid();
  int port = server->port();
  std::string dir = server->dir();
  Result<std::string> url = server->new_database();
  ASSERT_TRUE(url) << url.error().message;

  // A client still connected, in a transaction, does not hold the shutdown up; its backend
  // goes with the server. (The transaction is opened with a plain BEGIN: a pqxx::work would try
  // a ROLLBACK on the dead connection when destroyed, in which libpqxx 6.4 leaks a PGresult.)
  pqxx::connection client(*url);
  pid_t backend = -1;
  {
    pqxx::nontransaction statements(client);
    statements.exec("BEGIN; CREATE TABLE t (x int); INSERT INTO t VALUES (1)");
    backend = statements.exec1("SELECT pg_backend_pid()")[0].as<int>();
  }
  Result<std::string> state = server->psql(
      "postgres",
      "SELECT state FROM pg_stat_activity WHERE pid = " + std::to_string(backend) + ";");
  ASSERT_TRUE(state) << state.error().message;
  EXPECT_EQ(*state, "idle in transaction\n");
  ASSERT_TRUE(process_exists(backend));
  ASSERT_FALSE(connection_refused(port));

  auto started = std::chrono::steady_clock::now();
  server.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10))
      << "a fast shutdown should not need the SIGQUIT";

  EXPECT_FALSE(process_exists(pid)) << "the server's pid " << pid << " is still there";
  EXPECT_FALSE(process_exists(backend)) << "the client's backend " << backend << " is still there";
  EXPECT_TRUE(connection_refused(port)) << "port " << port << " still accepts connections";
  EXPECT_FALSE(fs::exists(dir)) << dir;
}

TEST(PostgresServerLifetimeTest, ServersRunSideBySide) {
  std::unique_ptr<PostgresServer> one;
  std::unique_ptr<PostgresServer> two;
  if (std::string why = start_into(one); !one) TRELLIS_SKIP_OR_FAIL(why);
  if (std::string why = start_into(two); !two) TRELLIS_SKIP_OR_FAIL(why);
  EXPECT_NE(one->port(), two->port());
  EXPECT_NE(one->dir(), two->dir());
  pid_t two_pid = two->pid();
  one.reset();
  EXPECT_TRUE(process_exists(two_pid)) << "stopping one server stopped the other";
  Result<std::string> alive = two->psql("postgres", "SELECT 1;");
  ASSERT_TRUE(alive) << alive.error().message;
  EXPECT_EQ(*alive, "1\n");
}

TEST(PostgresRequiredTest, OnlyTheValueOneRequires) {
  const char* saved = std::getenv("TRELLIS_REQUIRE_POSTGRES");
  std::optional<std::string> before = saved ? std::optional<std::string>(saved) : std::nullopt;
  ::setenv("TRELLIS_REQUIRE_POSTGRES", "1", 1);
  EXPECT_TRUE(postgres_required());
  ::setenv("TRELLIS_REQUIRE_POSTGRES", "0", 1);
  EXPECT_FALSE(postgres_required());
  ::unsetenv("TRELLIS_REQUIRE_POSTGRES");
  EXPECT_FALSE(postgres_required());
  if (before) ::setenv("TRELLIS_REQUIRE_POSTGRES", before->c_str(), 1);
}

}  // namespace
}  // namespace trellis::test
