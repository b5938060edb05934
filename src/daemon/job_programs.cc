#include "daemon/job_programs.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace trellis {
namespace {

namespace fs = std::filesystem;

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// FNV-1a over the path, size and modification time of each file: a copy's name.
std::string identity(const std::vector<std::string>& files) {
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&](std::string_view bytes) {
    for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
  };
  for (const std::string& file : files) {
    struct stat info {};
    ::stat(file.c_str(), &info);
    mix(file);
    mix(std::to_string(info.st_size));
    mix(std::to_string(info.st_mtim.tv_sec) + "." + std::to_string(info.st_mtim.tv_nsec));
  }
  char name[32];
  std::snprintf(name, sizeof name, "programs-%016llx", static_cast<unsigned long long>(hash));
  return name;
}

// A directory for copies at `place`: ours (root's, written by no one else), reachable by
// everyone, on a file system that lets programs run. "" with `why` when not.
bool usable_place(const std::string& place, std::string& why) {
  std::error_code ec;
  fs::create_directories(place, ec);
  if (ec) return why = place + ": " + ec.message(), false;
  struct stat info {};
  if (::lstat(place.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return why = place + ": not a directory", false;
  if (std::string reason = unreachable_reason(place); !reason.empty())
    return why = place + ": " + reason, false;
  struct statvfs fs_info {};
  if (::statvfs(place.c_str(), &fs_info) == 0 && (fs_info.f_flag & ST_NOEXEC))
    return why = place + ": mounted noexec", false;
  return true;
}

// A copy of `from` at `to` (mode 0755), through a temporary file and a rename.
bool copy_program(const std::string& from, const std::string& to) {
  std::error_code ec;
  const std::string temporary = to + ".tmp";
  fs::copy_file(from, temporary, fs::copy_options::overwrite_existing, ec);
  if (ec || ::chmod(temporary.c_str(), 0755) != 0) return false;
  return ::rename(temporary.c_str(), to.c_str()) == 0;
}

// Fills `dir` (a fresh directory) with the copies; the programs as found there.
bool fill(const std::string& dir, const JobPrograms& built, const std::string& trellis,
          JobPrograms& copied) {
  if (!copy_program(built.shell, dir + "/trellis-shell")) return false;
  copied.shell = dir + "/trellis-shell";
  if (built.slurm_commands.empty()) return true;
  if (!copy_program(trellis, dir + "/trellis")) return false;
  const std::string commands = dir + "/slurm";
  if (::mkdir(commands.c_str(), 0755) != 0) return false;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(built.slurm_commands, ec)) {
    const std::string name = entry.path().filename().string();
    if (fs::equivalent(entry.path(), trellis, ec))
      fs::create_symlink("../trellis", commands + "/" + name, ec);
    else
      copy_program(entry.path().string(), commands + "/" + name);
  }
  copied.slurm_commands = commands;
  return true;
}

// Copies of other builds at `place` not used for a day go: each build makes its own.
void remove_stale_copies(const std::string& place, const std::string& keep) {
  std::error_code ec;
  const auto day_ago = fs::file_time_type::clock::now() - std::chrono::hours(24);
  for (const fs::directory_entry& entry : fs::directory_iterator(place, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("programs-") || entry.path() == keep) continue;
    struct stat info {};
    if (::lstat(entry.path().c_str(), &info) != 0 || info.st_uid != 0 || !S_ISDIR(info.st_mode))
      continue;
    if (fs::last_write_time(entry.path() / "trellis-shell", ec) < day_ago && !ec)
      fs::remove_all(entry.path(), ec);
  }
}

}  // namespace

std::string unreachable_reason(const std::string& path) {
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  if (ec) return path + ": " + ec.message();
  fs::path at = "/";
  for (const fs::path& part : real.relative_path()) {
    struct stat info {};
    if (::stat(at.c_str(), &info) == 0 && !(info.st_mode & S_IXOTH))
      return at.string() + " is " + mode_text(info.st_mode);
    at /= part;
  }
  struct stat info {};
  if (::stat(real.c_str(), &info) != 0) return real.string() + ": " + std::strerror(errno);
  if (!(info.st_mode & S_IXOTH)) return real.string() + " is " + mode_text(info.st_mode);
  return "";
}

JobPrograms reachable_for_jobs(const JobPrograms& built,
                               const std::function<void(std::string)>& log,
                               const std::vector<std::string>& places) {
  std::error_code ec;
  std::string trellis;  // what the Slurm commands' links lead to
  if (!built.slurm_commands.empty()) trellis = fs::canonical(built.slurm_commands + "/srun", ec);
  std::string reason = unreachable_reason(built.shell);
  if (reason.empty() && !built.slurm_commands.empty()) {
    reason = unreachable_reason(built.slurm_commands);
    if (reason.empty() && !trellis.empty()) reason = unreachable_reason(trellis);
  }
  if (reason.empty()) return built;
  const std::string what = "jobs of users other than the agent's cannot run " + built.shell +
                           (built.slurm_commands.empty() ? "" : " or " + built.slurm_commands) +
                           " (" + reason + ")";
  if (::geteuid() != 0) {
    log(what + ", and an agent that is not root cannot copy them where they could");
    return built;
  }
  std::vector<std::string> sources = {fs::canonical(built.shell, ec).string()};
  if (!trellis.empty()) sources.push_back(trellis);
  std::string why_not;
  for (const std::string& place : places) {
    std::string why;
    if (!usable_place(place, why)) {
      why_not += (why_not.empty() ? "" : "; ") + why;
      continue;
    }
    const std::string final_dir = place + "/" + identity(sources);
    JobPrograms copied;
    struct stat info {};
    if (::lstat(final_dir.c_str(), &info) == 0) {
      // Made by an agent of this same build: used if it is root's and no one else may write it.
      if (S_ISDIR(info.st_mode) && info.st_uid == 0 && (info.st_mode & 022) == 0 &&
          ::access((final_dir + "/trellis-shell").c_str(), X_OK) == 0) {
        copied.shell = final_dir + "/trellis-shell";
        if (!built.slurm_commands.empty()) copied.slurm_commands = final_dir + "/slurm";
        log(what + ": using the copies in " + final_dir);
        return copied;
      }
      why_not += (why_not.empty() ? "" : "; ") + final_dir + " is not root's alone";
      continue;
    }
    std::string temporary = place + "/.programs-XXXXXX";
    if (::mkdtemp(temporary.data()) == nullptr || ::chmod(temporary.c_str(), 0755) != 0 ||
        !fill(temporary, built, trellis, copied)) {
      fs::remove_all(temporary, ec);
      why_not += (why_not.empty() ? "" : "; ") + place + ": the copy failed";
      continue;
    }
    if (::rename(temporary.c_str(), final_dir.c_str()) != 0) {
      fs::remove_all(temporary, ec);  // another agent's copy got there first
      if (::access((final_dir + "/trellis-shell").c_str(), X_OK) != 0) continue;
    }
    copied.shell = final_dir + "/trellis-shell";
    if (!built.slurm_commands.empty()) copied.slurm_commands = final_dir + "/slurm";
    remove_stale_copies(place, final_dir);
    log(what + ": copied them to " + final_dir);
    return copied;
  }
  log(what + ", and no copy could be made (" + why_not + ")");
  return built;
}

}  // namespace trellis
