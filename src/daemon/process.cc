#include "daemon/process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

namespace trellis {
namespace {

// A /proc file's text; "" when it cannot be read. Plain read(2): a process that exits while its
// file is read makes read fail with ESRCH, which std::ifstream turns into an exception.
std::string read_proc_file(const std::string& path) {
  std::string text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

// The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses,
// so the fields start after its last ')'). Empty when the process does not exist.
std::string stat_fields(pid_t pid) {
  std::string text = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  size_t close = text.rfind(')');
  if (close == std::string::npos) return "";
  return text.substr(close + 1);
}

}  // namespace

bool process_running(pid_t pid) {
  if (pid <= 0) return false;
  std::istringstream fields(stat_fields(pid));
  std::string state;
  if (!(fields >> state)) return false;
  return state != "Z" && state != "X" && state != "x";
}

long long process_start_time(pid_t pid) {
  if (pid <= 0) return -1;
  std::istringstream fields(stat_fields(pid));
  // Field 3 (state) is the first after the name; the start time is field 22.
  std::string field;
  for (int i = 3; i < 22; ++i) {
    if (!(fields >> field)) return -1;
  }
  long long start = -1;
  if (!(fields >> start)) return -1;
  return start;
}

std::vector<std::string> process_arguments(pid_t pid) {
  std::vector<std::string> arguments;
  if (pid <= 0) return arguments;
  std::string text = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline");
  // Each argument ends with a NUL.
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\0', at);
    if (end == std::string::npos) end = text.size();
    arguments.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return arguments;
}

std::string process_command_line(pid_t pid) {
  std::string text;
  for (const std::string& argument : process_arguments(pid))
    text += (text.empty() ? "" : " ") + argument;
  return text;
}

}  // namespace trellis
