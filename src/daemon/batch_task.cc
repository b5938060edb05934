#include "daemon/batch_task.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "trellis/v1/trellis.pb.h"

namespace trellis {
namespace {

namespace fs = std::filesystem;

Status write_script(const std::string& path, const std::string& text, int uid, int gid) {
  std::string temporary = path + ".new";
  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
  if (fd < 0)
    return fail(Error::Code::kUnavailable,
                temporary + ": cannot be written: " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      ::close(fd);
      return fail(Error::Code::kUnavailable, temporary + ": write failed: " + why);
    }
    done += static_cast<size_t>(n);
  }
  bool owned = uid < 0 || static_cast<uid_t>(uid) == ::geteuid() || ::fchown(fd, uid, gid) == 0;
  std::string why = owned ? "" : std::strerror(errno);
  if (::close(fd) != 0 || !owned) {
    ::unlink(temporary.c_str());
    return fail(Error::Code::kUnavailable,
                path + ": cannot be given to uid " + std::to_string(uid) + ": " + why);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    return fail(Error::Code::kUnavailable, path + ": " + std::strerror(errno));
  return Ok{};
}

}  // namespace

Status prepare_batch_task(const std::string& state_dir, const v1::LaunchRequest& request,
                          int node_id, TaskSpec& spec) {
  if (node_id != 0) {
    spec.argv = {"true"};  // not the first node: nothing of its own runs here
    return Ok{};
  }
  const std::string dir = state_dir + "/scripts";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(Error::Code::kUnavailable, dir + ": " + ec.message());
  ::chmod(dir.c_str(), 0711);
  const std::string job = std::to_string(request.job_id());
  const std::string path = dir + "/" + job + "." + std::to_string(request.attempt());
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.starts_with(job + ".") && entry.path().string() != path) fs::remove(entry.path(), ec);
  }
  if (Status ok = write_script(path, request.script(), request.uid(), request.gid()); !ok)
    return ok;
  spec.argv.front() = path;  // argv[0] named the script as submitted
  return Ok{};
}

}  // namespace trellis
