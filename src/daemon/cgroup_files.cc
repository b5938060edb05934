#include "daemon/cgroup_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace trellis::cgroup_files {

std::string read_small_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buffer[512];
  ssize_t n = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
}

Status write_control(const std::string& path, std::string_view text) {
  // O_TRUNC as a shell's '>' has: cgroupfs ignores it, and a plain file (a test's tree) then
  // holds what was written last.
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return fail("cannot open " + path + ": " + std::strerror(errno));
  ssize_t n = ::write(fd, text.data(), text.size());
  int error = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return fail("cannot write '" + std::string(text) + "' to " + path + ": " +
                std::strerror(error));
  return Ok{};
}

std::string mount_point(std::string_view fstype, std::string_view option) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
    size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream before(line.substr(0, dash)), after(line.substr(dash + 3));
    std::string id, parent, device, root, mount, type, source, super;
    before >> id >> parent >> device >> root >> mount;
    after >> type >> source >> super;
    if (type != fstype || root != "/") continue;
    if (!option.empty()) {
      bool found = false;
      std::istringstream options(super);
      for (std::string o; std::getline(options, o, ',');) found = found || o == option;
      if (!found) continue;
    }
    return mount;
  }
  return "";
}

std::string own_cgroup(std::string_view controllers) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // ID:CONTROLLERS:PATH
    size_t first = line.find(':');
    size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string listed = line.substr(first + 1, second - first - 1);
    bool match = controllers.empty() ? listed.empty() : false;
    if (!controllers.empty()) {
      std::istringstream names(listed);
      for (std::string n; std::getline(names, n, ',');) match = match || n == controllers;
    }
    if (match) return line.substr(second + 1);
  }
  return "";
}

bool make_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) {
    struct stat info {};
    return ::stat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
  }
  return false;
}

bool file_exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

}  // namespace trellis::cgroup_files
