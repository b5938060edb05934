#include "bench/postgres_server.h"

#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace trellis {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kBinEnv = "TRELLIS_POSTGRES_BIN";
constexpr const char* kDebianRoot = "/usr/lib/postgresql";
constexpr const char* kInstallHint =
    "install Debian's `postgresql` package (apt-get install postgresql; scripts/bootstrap.sh "
    "does), or set TRELLIS_POSTGRES_BIN to a folder holding initdb, postgres and psql";
constexpr auto kInitdbTimeout = 120s;
constexpr auto kStartTimeout = 30s;
constexpr auto kPsqlTimeout = 60s;
constexpr auto kFastShutdownTimeout = 10s;      // SIGINT: roll back, disconnect, checkpoint
constexpr auto kImmediateShutdownTimeout = 5s;  // SIGQUIT: quit without a checkpoint
constexpr int kPortAttempts = 5;

std::string errno_text(int err) {
  return std::strerror(err);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The last `lines` lines of `text`, without a final newline.
std::string tail(std::string text, int lines) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  size_t start = text.size();
  for (int i = 0; i < lines && start > 0; ++i) {
    size_t newline = text.rfind('\n', start - 1);
    if (newline == std::string::npos) return text;
    start = newline;
  }
  return start < text.size() ? text.substr(start + 1) : text;
}

bool all_digits(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string seconds(Clock::duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s";
}

bool executable(const fs::path& path) {
  return ::access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path);
}

// "15" -> {15}, "9.6" -> {9, 6}; nullopt for a name that is not a version.
std::optional<std::vector<int>> version_of(const std::string& name) {
  std::vector<int> version;
  std::istringstream parts(name);
  std::string part;
  while (std::getline(parts, part, '.')) {
    if (!all_digits(part)) return std::nullopt;
    version.push_back(std::atoi(part.c_str()));
  }
  if (version.empty()) return std::nullopt;
  return version;
}

// The folder holding initdb, postgres and psql: TRELLIS_POSTGRES_BIN, else the newest
// /usr/lib/postgresql/VERSION/bin that holds all three (a newer folder may hold psql only, from a
// postgresql-client package).
Result<std::string> find_bin() {
  auto complete = [](const fs::path& bin) {
    return executable(bin / "initdb") && executable(bin / "postgres") && executable(bin / "psql");
  };
  if (const char* env = std::getenv(kBinEnv); env && *env) {
    if (complete(env)) return std::string(env);
    return fail(Error::Code::kUnavailable,
                std::string(kBinEnv) + "=" + env + " does not hold initdb, postgres and psql");
  }
  std::vector<std::pair<std::vector<int>, fs::path>> folders;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(kDebianRoot, ec)) {
    if (auto version = version_of(entry.path().filename().string())) {
      folders.emplace_back(*version, entry.path() / "bin");
    }
  }
  std::sort(folders.begin(), folders.end(), [](const auto& a, const auto& b) { return a > b; });
  for (const auto& [version, bin] : folders) {
    if (complete(bin)) return bin.string();
  }
  return fail(Error::Code::kUnavailable,
              std::string("PostgreSQL server binaries not found: no ") + kDebianRoot +
                  "/VERSION/bin holds initdb, postgres and psql; " + kInstallHint);
}

// SIGKILLs `pid`, our child, and the children it has: first stopped, so that it can neither
// reap a child (whose pid could then be reused) nor start one while they are listed.
void kill_with_children(pid_t pid) {
  ::kill(pid, SIGSTOP);
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator("/proc", ec)) {
    std::string name = entry.path().filename().string();
    if (!all_digits(name)) continue;
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses.
    std::string stat = read_text(entry.path() / "stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long parent = 0;
    if (rest >> state >> parent && parent == pid) ::kill(std::atoi(name.c_str()), SIGKILL);
  }
  ::kill(pid, SIGKILL);
}

// Waits up to `timeout` for our child `pid` to exit and reaps it: its wait status, or nullopt
// while it still runs. A child already reaped elsewhere counts as exited (status -1).
std::optional<int> wait_exit(pid_t pid, Clock::duration timeout) {
  Clock::time_point give_up = Clock::now() + timeout;
  std::chrono::milliseconds pause = 1ms;
  while (true) {
    int status = 0;
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return -1;
    if (Clock::now() >= give_up) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::milliseconds>(pause * 2, 20ms);
  }
}

// Reaps our child `pid`, waiting as long as it takes (after a SIGKILL).
void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

std::string describe_status(int status) {
  if (status == -1) return "ended (status lost)";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by ") + strsignal(WTERMSIG(status));
  return "ended";
}

// A port on 127.0.0.1 that was free a moment ago: bound with port 0 (the kernel picks an
// ephemeral port) and released. Someone may take it before the server binds it: launch() retries.
Result<int> free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(Error::Code::kUnavailable, "postgres: socket: " + errno_text(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  int err = errno;
  ::close(fd);
  if (!ok) return fail(Error::Code::kUnavailable, "postgres: no free port: " + errno_text(err));
  return static_cast<int>(ntohs(address.sin_port));
}

// `text` as an SQL string literal's content: quotes doubled.
std::string sql_quoted(const std::string& text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out;
}

}  // namespace

struct PostgresTools {
  std::string bin;  // holds initdb, postgres, psql
  // As root, initdb and the server run as `user` (uid, gid, groups); as anyone else, as themselves.
  bool switch_user = false;
  std::string user;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;

  // Whether `user` may search every folder from / down to `dir` (to reach its data and socket).
  bool can_reach(const fs::path& dir) const {
    if (!switch_user) return true;
    for (fs::path p = dir; !p.empty(); p = p.parent_path()) {
      struct stat st {};
      if (::stat(p.c_str(), &st) != 0) return false;
      bool in_group = std::find(groups.begin(), groups.end(), st.st_gid) != groups.end();
      bool searchable = st.st_uid == uid ? (st.st_mode & S_IXUSR)
                        : in_group       ? (st.st_mode & S_IXGRP)
                                         : (st.st_mode & S_IXOTH);
      if (!searchable) return false;
      if (p == p.root_path()) break;
    }
    return true;
  }
};

namespace {

Result<std::shared_ptr<const PostgresTools>> find_tools() {
  auto tools = std::make_shared<PostgresTools>();
  Result<std::string> bin = find_bin();
  if (!bin) return bin.error();
  tools->bin = *bin;
  if (::geteuid() != 0) return std::shared_ptr<const PostgresTools>(tools);
  // The server refuses to run as root.
  tools->switch_user = true;
  tools->user = "postgres";
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  ::getpwnam_r(tools->user.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (!found) {
    return fail(Error::Code::kUnavailable,
                "PostgreSQL refuses to run as root, and the `postgres` system user to run it as "
                "does not exist: install Debian's `postgresql` package (it creates the user) or "
                "run the tests as a user other than root");
  }
  tools->uid = found->pw_uid;
  tools->gid = found->pw_gid;
  int count = 64;
  tools->groups.resize(count);
  if (::getgrouplist(tools->user.c_str(), tools->gid, tools->groups.data(), &count) < 0) {
    tools->groups.resize(count);
    ::getgrouplist(tools->user.c_str(), tools->gid, tools->groups.data(), &count);
  }
  tools->groups.resize(std::max(count, 0));
  return std::shared_ptr<const PostgresTools>(tools);
}

// The environment of the programs we run: ours without libpq's PG* variables (a PGOPTIONS or
// PGDATABASE of the user's must not reach them) and with the C locale.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string var = *e;
    if (var.rfind("PG", 0) == 0 || var.rfind("LC_", 0) == 0 || var.rfind("LANG", 0) == 0) continue;
    env.push_back(var);
  }
  env.push_back("LC_ALL=C");
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts `args` (args[0] a path) in `cwd` with stdin from /dev/null and stdout, stderr on
// `out_fd`, `err_fd`; as the server's user when `as_server_user` and root. The child gets SIGINT
// should this thread end first. Returns the child's pid, or why it could not start.
Result<pid_t> spawn(const PostgresTools& tools, std::vector<std::string> args,
                    const std::string& cwd, int out_fd, int err_fd, bool as_server_user) {
  // Everything the child needs is made before fork(): between fork and exec, a child of a
  // threaded process may make async-signal-safe calls only.
  std::vector<std::string> env = child_environment();
  std::vector<char*> argv = pointers(args);
  std::vector<char*> envp = pointers(env);
  bool switch_user = as_server_user && tools.switch_user;
  int report[2];  // the child writes {step, errno} here when it cannot exec
  if (::pipe2(report, O_CLOEXEC) != 0)
    return fail(Error::Code::kInternal, "postgres: pipe: " + errno_text(errno));
  pid_t parent = ::getpid();
  long max_fd = std::min(::sysconf(_SC_OPEN_MAX), 65536L);
  pid_t child = ::fork();
  if (child < 0) {
    int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return fail(Error::Code::kUnavailable, "postgres: fork: " + errno_text(err));
  }
  if (child == 0) {
    int step = 0;
    auto give_up = [&](int what) {
      int message[2] = {what, errno};
      (void)!::write(report[1], message, sizeof message);
      ::_exit(127);
    };
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (switch_user) {
      // setgroups is refused in some user namespaces; the gid and uid are what matter.
      if (::setgroups(tools.groups.size(), tools.groups.data()) != 0 && errno != EPERM)
        give_up(step);
      ++step;
      if (::setgid(tools.gid) != 0) give_up(step);
      ++step;
      if (::setuid(tools.uid) != 0) give_up(step);
    }
    step = 3;
    // After setuid, which clears it.
    if (::prctl(PR_SET_PDEATHSIG, SIGINT) != 0) give_up(step);
    if (::getppid() != parent) ::_exit(127);
    step = 4;
    if (::chdir(cwd.c_str()) != 0) give_up(step);
    step = 5;
    int null = ::open("/dev/null", O_RDONLY);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0)
      give_up(step);
    // Nothing else of ours (a test's sockets, files) stays open in the program. (Marked
    // close-on-exec rather than closed, so that `report` stays open until the exec.)
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {  // before Linux 5.11
      for (int fd = 3; fd < max_fd; ++fd) {
        if (fd != report[1]) ::close(fd);
      }
    }
    step = 6;
    ::execve(argv[0], argv.data(), envp.data());
    give_up(step);
  }
  ::close(report[1]);
  int message[2] = {0, 0};
  ssize_t got;
  while ((got = ::read(report[0], message, sizeof message)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (got <= 0) return child;  // the pipe closed on exec
  reap(child);
  static constexpr const char* kSteps[] = {"setgroups", "setgid",      "setuid", "prctl",
                                           "chdir",     "redirecting", "exec"};
  std::string what = kSteps[std::clamp(message[0], 0, 6)];
  if (message[0] == 4) what += " " + cwd;
  if (message[0] <= 2) what += " (to run as " + tools.user + ")";
  return fail(Error::Code::kUnavailable,
              "postgres: cannot run " + args[0] + ": " + what + ": " + errno_text(message[1]));
}

// An fd open for writing `path` (truncated; O_APPEND, as the server's processes share it).
Result<int> open_output(const fs::path& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    std::string why = errno_text(errno);
    return fail(Error::Code::kUnavailable, "postgres: cannot create " + path.string() + ": " + why);
  }
  return fd;
}

struct Finished {
  int status = 0;
};

// Runs `args` to its end (at most `timeout`) with stdout to `out`, stderr to `err` (may be the
// same file).
Result<Finished> run(const PostgresTools& tools, const std::vector<std::string>& args,
                     const std::string& cwd, const fs::path& out, const fs::path& err,
                     bool as_server_user, Clock::duration timeout) {
  Result<int> out_fd = open_output(out);
  if (!out_fd) return out_fd.error();
  Result<int> err_fd = out == err ? *out_fd : open_output(err);
  if (!err_fd) {
    ::close(*out_fd);
    return err_fd.error();
  }
  Result<pid_t> child = spawn(tools, args, cwd, *out_fd, *err_fd, as_server_user);
  ::close(*out_fd);
  if (*err_fd != *out_fd) ::close(*err_fd);
  if (!child) return child.error();
  std::optional<int> status = wait_exit(*child, timeout);
  if (!status) {
    ::kill(*child, SIGKILL);
    reap(*child);
    return fail(Error::Code::kUnavailable,
                "postgres: " + args[0] + " did not finish within " + seconds(timeout));
  }
  return Finished{*status};
}

bool succeeded(int status) {
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The status line of a running postmaster's postmaster.pid ("ready" once it accepts
// connections), when the file names `pid`; "" otherwise.
std::string postmaster_status(const fs::path& data, pid_t pid) {
  std::istringstream lines(read_text(data / "postmaster.pid"));
  std::string line;
  std::vector<std::string> fields;
  while (std::getline(lines, line)) fields.push_back(line);
  if (fields.size() < 8 || std::atol(fields[0].c_str()) != pid) return "";
  std::string status = fields[7];
  while (!status.empty() && status.back() == ' ') status.pop_back();
  return status;
}

}  // namespace

Result<std::unique_ptr<PostgresServer>> PostgresServer::start() {
  Result<std::shared_ptr<const PostgresTools>> tools = find_tools();
  if (!tools) return tools.error();
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  // As root, the server's user must reach the folder; a TMPDIR under /root would not do.
  if (ec || !(*tools)->can_reach(base)) base = "/tmp";
  std::string pattern = (base / "trellis-postgres-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    std::string why = errno_text(errno);
    return fail(Error::Code::kUnavailable,
                "postgres: cannot create a folder like " + pattern + ": " + why);
  }
  // Owned from here on: a failure below stops what was started and removes the folder.
  std::unique_ptr<PostgresServer> server(new PostgresServer(pattern, *tools));
  if ((*tools)->switch_user && ::chown(pattern.c_str(), (*tools)->uid, (*tools)->gid) != 0) {
    std::string why = errno_text(errno);
    return fail(Error::Code::kUnavailable,
                "postgres: cannot chown " + pattern + " to " + (*tools)->user + ": " + why);
  }
  if (Status init = server->init_cluster(); !init) return init.error();
  if (Status launched = server->launch(); !launched) return launched.error();
  Result<std::string> roles =
      server->psql("postgres", std::string("CREATE ROLE ") + kWriter + " LOGIN;\n" +
                                   "CREATE ROLE " + kReader + " LOGIN;\n");
  if (!roles) return roles.error();
  return server;
}

Status PostgresServer::init_cluster() {
  fs::path dir = dir_;
  fs::path log = dir / "initdb.log";
  Result<Finished> initdb =
      run(*tools_,
          {tools_->bin + "/initdb", "--pgdata=" + (dir / "data").string(), "--auth=trust",
           std::string("--username=") + kSuperuser, "--encoding=UTF8", "--locale=C", "--no-sync"},
          dir_, log, log, true, kInitdbTimeout);
  if (!initdb) return initdb.error();
  if (!succeeded(initdb->status)) {
    return fail(Error::Code::kUnavailable, "postgres: initdb " + describe_status(initdb->status) +
                                               "; its output ends:\n" + tail(read_text(log), 20));
  }
  std::ofstream conf(dir / "data" / "postgresql.conf", std::ios::app);
  conf << "\n# tests/postgres_server.cc: a private server for one test process.\n"
       << "listen_addresses = '127.0.0.1'\n"
       << "unix_socket_directories = '" << sql_quoted(dir_) << "'\n"
       << "# No durability: a test's data does not outlive the test, and a crash of the machine\n"
       << "# may lose it. Commits and checkpoints are faster without.\n"
       << "fsync = off\n"
       << "synchronous_commit = off\n"
       << "full_page_writes = off\n";
  if (std::getenv("TRELLIS_PG_STATS")) conf << "shared_preload_libraries = 'pg_stat_statements'\n";
  conf.close();
  if (!conf) {
    return fail(Error::Code::kUnavailable,
                "postgres: cannot append to " + (dir / "data" / "postgresql.conf").string());
  }
  return Ok{};
}

Status PostgresServer::launch() {
  fs::path data = fs::path(dir_) / "data";
  fs::path log = fs::path(dir_) / "server.log";
  for (int attempt = 1;; ++attempt) {
    Result<int> port = free_port();
    if (!port) return port.error();
    Result<int> log_fd = open_output(log);
    if (!log_fd) return log_fd.error();
    Result<pid_t> child = spawn(
        *tools_, {tools_->bin + "/postgres", "-D", data.string(), "-p", std::to_string(*port)},
        dir_, *log_fd, *log_fd, true);
    ::close(*log_fd);
    if (!child) return child.error();
    pid_ = *child;
    port_ = *port;

    Clock::time_point give_up = Clock::now() + kStartTimeout;
    std::chrono::milliseconds pause = 1ms;
    while (true) {
      if (postmaster_status(data, pid_) == "ready") return Ok{};
      if (std::optional<int> status = wait_exit(pid_, 0s)) {
        pid_ = -1;
        std::string text = read_text(log);
        // Someone took the port between free_port() and the server's bind: another port.
        if (text.find("Address already in use") != std::string::npos && attempt < kPortAttempts)
          break;
        return fail(Error::Code::kUnavailable, "postgres: the server (port " +
                                                   std::to_string(port_) + ") " +
                                                   describe_status(*status) + " while starting; " +
                                                   log.string() + " ends:\n" + tail(text, 20));
      }
      if (Clock::now() >= give_up) {
        std::string why = "postgres: the server (pid " + std::to_string(pid_) + ", port " +
                          std::to_string(port_) + ") did not accept connections within " +
                          seconds(kStartTimeout) + "; " + log.string() + " ends:\n" + log_tail();
        stop();  // before the destructor removes the folder
        return fail(Error::Code::kUnavailable, why);
      }
      std::this_thread::sleep_for(pause);
      pause = std::min<std::chrono::milliseconds>(pause * 2, 20ms);
    }
  }
}

Result<std::string> PostgresServer::new_database() {
  std::string name = "trellis_" + std::to_string(++databases_);
  // template0: empty whatever psql() did to template1. Default privileges for objects that the
  // writer or the superuser make later, in any schema.
  std::string sql =
      "CREATE DATABASE " + name + " OWNER " + kWriter + " TEMPLATE template0;\n" +
      "REVOKE ALL ON DATABASE " + name + " FROM PUBLIC;\n" + "GRANT CONNECT ON DATABASE " + name +
      " TO " + kReader + ";\n" + "\\connect " + name + "\n" + "GRANT USAGE ON SCHEMA public TO " +
      kReader + ";\n" + "GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + kReader + ";\n" +
      "GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO " + kReader + ";\n" +
      "ALTER DEFAULT PRIVILEGES FOR ROLE " + kWriter + ", " + kSuperuser +
      " GRANT USAGE ON SCHEMAS TO " + kReader + ";\n" + "ALTER DEFAULT PRIVILEGES FOR ROLE " +
      kWriter + ", " + kSuperuser + " GRANT SELECT ON TABLES TO " + kReader + ";\n" +
      "ALTER DEFAULT PRIVILEGES FOR ROLE " + kWriter + ", " + kSuperuser +
      " GRANT SELECT ON SEQUENCES TO " + kReader + ";\n";
  Result<std::string> done = psql("postgres", sql);
  if (!done) return done.error();
  return url_for(kWriter, name);
}

std::string PostgresServer::reader_url(const std::string& database_url) const {
  std::string name = database_url.substr(database_url.rfind('/') + 1);
  name = name.substr(0, name.find('?'));
  return url_for(kReader, name);
}

std::string PostgresServer::url_for(std::string_view user, std::string_view database) const {
  // The socket folder as the URL's host, percent-encoded ("/tmp/x" -> "%2Ftmp%2Fx").
  std::string host;
  for (unsigned char c : dir_) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      host += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      host += '%';
      host += kHex[c >> 4];
      host += kHex[c & 15];
    }
  }
  return "postgresql://" + std::string(user) + "@" + host + ":" + std::to_string(port_) + "/" +
         std::string(database);
}

Result<std::string> PostgresServer::psql(const std::string& database, const std::string& sql) {
  fs::path dir = dir_;
  fs::path input = dir / "psql.sql";
  fs::path out = dir / "psql.out";
  fs::path err = dir / "psql.err";
  {
    std::ofstream file(input, std::ios::trunc);
    file << sql;
    if (!file.flush())
      return fail(Error::Code::kUnavailable, "postgres: cannot write " + input.string());
  }
  // psql is a client: it runs as whoever we are.
  Result<Finished> ran = run(
      *tools_,
      {tools_->bin + "/psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "--no-align", "--tuples-only",
       "--host=127.0.0.1", "--port=" + std::to_string(port_),
       std::string("--username=") + kSuperuser, "--dbname=" + database, "--file=" + input.string()},
      dir_, out, err, false, kPsqlTimeout);
  if (!ran) return ran.error();
  if (!succeeded(ran->status)) {
    std::string why = read_text(err);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return fail(Error::Code::kInvalidArgument,
                "postgres: psql on " + database + " " + describe_status(ran->status) + ": " + why);
  }
  return read_text(out);
}

namespace {

// Fields 14-17 of /proc/PID/stat (utime, stime, cutime, cstime) in clock ticks, and field 4 (the
// parent's pid); false when the process is gone.
bool read_stat(const std::string& path, long& ppid, long long ticks[4]) {
  std::ifstream in(path);
  std::string text;
  if (!std::getline(in, text)) return false;
  size_t close = text.rfind(')');  // the name may hold spaces and parentheses
  if (close == std::string::npos) return false;
  std::istringstream fields(text.substr(close + 2));
  std::string state;
  long long skip;
  fields >> state >> ppid;
  for (int i = 5; i <= 13; ++i) fields >> skip;
  for (int i = 0; i < 4; ++i) fields >> ticks[i];
  return static_cast<bool>(fields);
}

}  // namespace

double PostgresServer::cpu_seconds() const {
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  long long total = 0;
  long ppid = 0;
  long long ticks[4] = {};
  if (read_stat("/proc/" + std::to_string(pid_) + "/stat", ppid, ticks))
    total += ticks[0] + ticks[1] + ticks[2] + ticks[3];
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (read_stat(entry.path().string() + "/stat", ppid, ticks) && ppid == pid_)
      total += ticks[0] + ticks[1];
  }
  return total / tick;
}

std::string PostgresServer::log_tail(int lines) const {
  return tail(read_text(fs::path(dir_) / "server.log"), lines);
}

void PostgresServer::stop() {
  if (pid_ <= 0) return;
  // pid_ is our child and not yet reaped, so the number cannot belong to anyone else.
  ::kill(pid_, SIGINT);  // fast shutdown: roll back, disconnect the clients, checkpoint, exit
  if (!wait_exit(pid_, kFastShutdownTimeout)) {
    ::kill(pid_, SIGQUIT);  // immediate shutdown: the postmaster SIGQUITs its children, exits
    if (!wait_exit(pid_, kImmediateShutdownTimeout)) {
      kill_with_children(pid_);
      reap(pid_);
    }
  }
  pid_ = -1;
}

PostgresServer::~PostgresServer() {
  stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

bool postgres_required() {
  const char* value = std::getenv("TRELLIS_REQUIRE_POSTGRES");
  return value && std::string(value) == "1";
}

}  // namespace trellis
