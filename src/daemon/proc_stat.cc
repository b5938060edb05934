#include "daemon/proc_stat.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace trellis {
namespace {

// A stat file's text, or kNotFound. Plain read(2): a process that exits while its file is read
// makes read fail with ESRCH. The kernel makes a stat file's text whole at the first read, so a
// read that does not fill the buffer has it all (no second read to see the end).
Result<std::string> read_stat_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(Error::Code::kNotFound, path + ": " + std::strerror(errno));
  std::string text;
  char buffer[1024];
  int error = 0;
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<size_t>(n) < sizeof buffer) break;
  }
  ::close(fd);
  if (error != 0) return fail(Error::Code::kNotFound, path + ": " + std::strerror(error));
  return text;
}

// A decimal number made of all of `text`.
template <typename T>
bool parse_number(std::string_view text, T& value) {
  const char* end = text.data() + text.size();
  auto [at, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && at == end && !text.empty();
}

// The digits-only names in a /proc directory (pids, or thread ids), ascending.
std::vector<pid_t> numeric_entries(const std::string& directory) {
  std::vector<pid_t> ids;
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return ids;
  while (dirent* entry = ::readdir(dir)) {
    pid_t id = 0;
    if (parse_number(entry->d_name, id) && id > 0) ids.push_back(id);
  }
  ::closedir(dir);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

Result<ProcStat> parse_proc_stat(std::string_view text) {
  size_t open = text.find(" (");
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open + 2)
    return fail("not a /proc stat line (no \"PID (NAME)\"): " + std::string(text.substr(0, 80)));
  ProcStat stat;
  if (!parse_number(text.substr(0, open), stat.pid))
    return fail("bad pid in a /proc stat line: " + std::string(text.substr(0, open)));
  stat.name = std::string(text.substr(open + 2, close - open - 2));

  // The fields after the name, by their numbers in proc(5): 3 is the first.
  std::vector<std::string_view> fields;
  std::string_view rest = text.substr(close + 1);
  while (fields.size() < 20) {  // up to field 22
    size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    size_t end = rest.find_first_of(" \n", start);
    if (end == std::string_view::npos) end = rest.size();
    fields.push_back(rest.substr(start, end - start));
    rest = rest.substr(end);
  }
  if (fields.size() < 20)
    return fail("a /proc stat line of process " + std::to_string(stat.pid) + " ends at field " +
                std::to_string(fields.size() + 2) + ", before field 22");
  auto field = [&](int number) { return fields[static_cast<size_t>(number - 3)]; };
  if (field(3).size() != 1)
    return fail("bad state in the /proc stat line of process " + std::to_string(stat.pid));
  stat.state = field(3)[0];
  long long utime = 0, stime = 0;
  if (!parse_number(field(4), stat.parent) || !parse_number(field(5), stat.process_group) ||
      !parse_number(field(14), utime) || !parse_number(field(15), stime) ||
      !parse_number(field(20), stat.threads) || !parse_number(field(22), stat.start_time))
    return fail("bad number in the /proc stat line of process " + std::to_string(stat.pid));
  stat.cpu_ticks = utime + stime;
  return stat;
}

Result<ProcStat> read_proc_stat(pid_t pid) {
  if (pid <= 0) return fail(Error::Code::kNotFound, "no process " + std::to_string(pid));
  Result<std::string> text = read_stat_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return text.error();
  return parse_proc_stat(*text);
}

int open_proc_stat(pid_t pid) {
  if (pid <= 0) return -1;
  return ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
}

Result<ProcStat> read_open_proc_stat(int fd) {
  char buffer[1024];
  ssize_t n = ::pread(fd, buffer, sizeof buffer, 0);
  while (n < 0 && errno == EINTR) n = ::pread(fd, buffer, sizeof buffer, 0);
  if (n <= 0)
    return fail(Error::Code::kNotFound,
                "the process has gone" + (n < 0 ? ": " + std::string(std::strerror(errno)) : ""));
  std::string text(buffer, static_cast<size_t>(n));
  // (A stat line is far shorter than the buffer: a full one is read on to its end.)
  for (char more[1024]; n == static_cast<ssize_t>(sizeof buffer);) {
    n = ::pread(fd, more, sizeof more, static_cast<off_t>(text.size()));
    if (n > 0) text.append(more, static_cast<size_t>(n));
  }
  return parse_proc_stat(text);
}

std::vector<pid_t> processes_in_group(pid_t process_group) {
  std::vector<pid_t> members;
  if (process_group <= 0) return members;
  for (pid_t pid : numeric_entries("/proc")) {
    Result<ProcStat> stat = read_proc_stat(pid);
    if (stat && stat->process_group == process_group) members.push_back(pid);
  }
  return members;
}

std::vector<ProcStat> read_thread_stats(pid_t pid) {
  std::vector<ProcStat> threads;
  if (pid <= 0) return threads;
  std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  for (pid_t tid : numeric_entries(task_dir)) {
    Result<std::string> text = read_stat_file(task_dir + "/" + std::to_string(tid) + "/stat");
    if (!text) continue;  // the thread ended
    Result<ProcStat> stat = parse_proc_stat(*text);
    if (stat) threads.push_back(std::move(*stat));
  }
  return threads;
}

}  // namespace trellis
