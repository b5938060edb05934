// The small file operations on cgroup file systems that the freezer (daemon/freezer.h) and the
// resource limits (daemon/resource_limits.h) share: where a hierarchy is mounted, which cgroup
// this process is in, and reading and writing control files with errors that name the file.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace trellis::cgroup_files {

// The start of a small file (a control file): "" when it cannot be read. Plain read(2): a gang
// switch reads several per agent, and a stream's set-up cost more than the read.
std::string read_small_file(const std::string& path);
// Writes `text` to a control file (opened for this write); the error names the file and errno.
Status write_control(const std::string& path, std::string_view text);
// The mount point of the hierarchy of `fstype` ("cgroup2", or "cgroup" with `option` among its
// super options, e.g. "freezer"), from /proc/self/mountinfo; "" when none.
std::string mount_point(std::string_view fstype, std::string_view option);
// This process's cgroup in the hierarchy whose /proc/self/cgroup line lists `controller` (""
// for the unified one): "/a/b", or "" when not found.
std::string own_cgroup(std::string_view controller);
// Makes `dir` (its parent exists) unless it exists; true when it is a directory now.
bool make_directory(const std::string& dir);
bool file_exists(const std::string& path);

}  // namespace trellis::cgroup_files
