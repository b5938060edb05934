#include "daemon/agent_requests.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <map>
#include <thread>

#include "trellis/v1/trellis.pb.h"

namespace trellis {
namespace {

Error invalid(std::string message) {
  return fail(std::move(message));
}

// A day: a longer grace period is a mistake, and its milliseconds would overflow sooner or later.
constexpr double kMaxGraceSeconds = 86400;

}  // namespace

Status check_launch_request(const v1::LaunchRequest& request, const std::set<std::string>& served) {
  if (request.job_id() <= 0)
    return invalid("job_id: must be positive, got " + std::to_string(request.job_id()));
  if (request.attempt() <= 0)
    return invalid("attempt: must be positive, got " + std::to_string(request.attempt()));
  if (request.nodes().empty()) return invalid("nodes: empty");
  if (request.nnodes() <= 0)
    return invalid("nnodes: must be positive, got " + std::to_string(request.nnodes()));
  std::set<std::string> seen;
  for (const std::string& node : request.nodes()) {
    if (!served.contains(node))
      return invalid("nodes: this agent does not serve node '" + node + "'");
    if (!seen.insert(node).second) return invalid("nodes: '" + node + "' appears twice");
    auto rank = request.node_ids().find(node);
    if (rank == request.node_ids().end())
      return invalid("node_ids: no rank for node '" + node + "'");
    if (rank->second < 0 || rank->second >= request.nnodes()) {
      return invalid("node_ids: rank " + std::to_string(rank->second) + " of node '" + node +
                     "' is outside 0.." + std::to_string(request.nnodes() - 1));
    }
  }
  if (request.argv().empty() || request.argv(0).empty()) return invalid("argv: empty command");
  // exec takes C strings: a NUL inside one would cut it short without a word.
  for (const std::string& arg : request.argv())
    if (arg.find('\0') != std::string::npos) return invalid("argv: an argument holds a NUL byte");
  for (const std::string* path : {&request.cwd(), &request.output(), &request.error()})
    if (path->find('\0') != std::string::npos) return invalid("cwd, output, error: a NUL byte");
  if (!request.cwd().empty() && request.cwd()[0] != '/')
    return invalid("cwd: '" + request.cwd() + "' is not an absolute path");
  if (request.uid() < 0) return invalid("uid: must not be negative");
  if (request.gid() < 0) return invalid("gid: must not be negative");
  for (const auto& [name, value] : request.env()) {
    if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
      return invalid("env: bad variable name '" + name + "'");
    if (value.find('\0') != std::string::npos)
      return invalid("env: the value of " + name + " holds a NUL byte");
  }
  if (!std::isfinite(request.launch_by())) return invalid("launch_by: not a finite time");
  return Ok{};
}

TaskSpec task_spec(const v1::LaunchRequest& request, const std::string& node,
                   const std::vector<std::string>& agent_env) {
  TaskSpec spec;
  spec.key = {request.job_id(), request.attempt(), node};
  spec.argv.assign(request.argv().begin(), request.argv().end());
  spec.cwd = request.cwd();
  spec.output = request.output();
  spec.error = request.error();
  spec.uid = request.uid();
  spec.gid = request.gid();
  std::map<std::string, std::string> env;
  for (const std::string& entry : agent_env) {
    size_t eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  if (static_cast<uid_t>(request.uid()) != ::geteuid()) {
    std::vector<char> buffer(16384);
    struct passwd entry {};
    struct passwd* found = nullptr;
    if (::getpwuid_r(request.uid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
      env["USER"] = env["LOGNAME"] = entry.pw_name;
      env["HOME"] = entry.pw_dir;
    }
  }
  for (const auto& [name, value] : request.env()) env[name] = value;
  env["TRELLIS_JOB_ID"] = std::to_string(request.job_id());
  env["TRELLIS_NODELIST"] = request.nodelist();
  env["TRELLIS_NNODES"] = std::to_string(request.nnodes());
  env["TRELLIS_NODEID"] = std::to_string(request.node_ids().at(node));
  env["TRELLIS_NODENAME"] = node;
  // 1 the first time; a job requeued (node failure) runs again with the next attempt.
  env["TRELLIS_ATTEMPT"] = std::to_string(request.attempt());
  // Nodes are allocated whole: the job has every CPU of its node (as Slurm's exclusive jobs).
  env["SLURM_CPUS_ON_NODE"] = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  for (const auto& [name, value] : env) spec.env.push_back(name + "=" + value);
  return spec;
}

Result<std::chrono::milliseconds> check_signal_request(const v1::SignalRequest& request,
                                                       std::chrono::milliseconds default_grace) {
  if (request.job_id() <= 0) return invalid("job_id: must be positive");
  if (request.attempt() < 0) return invalid("attempt: must be 0 (any) or positive");
  if (request.signal() < 0 || request.signal() >= NSIG)
    return invalid("signal: " + std::to_string(request.signal()) + " is not a signal number");
  double grace = request.grace_seconds();
  // Written so that NaN fails too.
  if (!(grace >= 0 && grace <= kMaxGraceSeconds))
    return invalid("grace_seconds: must be between 0 and " +
                   std::to_string(static_cast<int>(kMaxGraceSeconds)) + " seconds");
  if (grace == 0) return default_grace;
  return std::chrono::milliseconds(static_cast<long long>(grace * 1000));
}

}  // namespace trellis
