#include "daemon/host_network.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

extern char** environ;

namespace trellis {
namespace {

// Networks are numbered 0..kNetworks-1; network I is 10.(160 + I / 256).(I % 256).0/24.
constexpr int kNetworks = 16 * 256;

std::string subnet_prefix(int index) {
  return "10." + std::to_string(160 + index / 256) + "." + std::to_string(index % 256) + ".";
}

// The `ip` program: Debian's iproute2 puts it in /usr/sbin (/sbin on older systems).
std::string ip_program() {
  for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (::access(path, X_OK) == 0) return path;
  return "";
}

// Runs `ip ARGS...`; its exit status and what it printed (stdout and stderr together).
struct IpRun {
  int status = -1;
  std::string output;
};
IpRun run_ip(const std::vector<std::string>& args) {
  IpRun run;
  std::string program = ip_program();
  if (program.empty()) {
    run.output = "no `ip` program (install iproute2)";
    return run;
  }
  std::vector<std::string> all = {program};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    run.output = "cannot make a pipe";
    return run;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  pid_t pid = -1;
  int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    run.output = "cannot run " + program;
    return run;
  }
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    run.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  while (!run.output.empty() && run.output.back() == '\n') run.output.pop_back();
  return run;
}

Status ip(const std::vector<std::string>& args) {
  IpRun run = run_ip(args);
  if (run.status == 0) return Ok{};
  std::string command = "ip";
  for (const std::string& a : args) command += " " + a;
  return fail(Error::Code::kUnavailable, command + ": " + run.output);
}

// Whether some route of the machine other than the default one covers `address`.
bool routed(const std::string& address) {
  IpRun run = run_ip({"-4", "-o", "route", "show", "to", "match", address});
  std::istringstream lines(run.output);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && !line.starts_with("default")) return true;
  return false;
}

}  // namespace

Status HostNetwork::available() {
  if (::geteuid() != 0) return fail(Error::Code::kUnavailable, "network namespaces need root");
  if (ip_program().empty())
    return fail(Error::Code::kUnavailable, "no `ip` program (install iproute2)");
  // A namespace made and deleted at once shows that this kernel and container allow them.
  std::string probe = "trellis-probe-" + std::to_string(::getpid());
  if (Status made = ip({"netns", "add", probe}); !made) return made;
  return ip({"netns", "del", probe});
}

Result<HostNetwork> HostNetwork::create(int hosts) {
  if (hosts < 1 || hosts > kMaxHosts)
    return fail("hosts: " + std::to_string(hosts) + "; between 1 and " + std::to_string(kMaxHosts));
  HostNetwork net;
  // The bridge's name is the claim on a number: `ip link add` refuses one that exists.
  const int start = ::getpid() % kNetworks;
  for (int i = 0; i < kNetworks && net.index_ < 0; ++i) {
    int index = (start + i) % kNetworks;
    std::string prefix = subnet_prefix(index);
    if (routed(prefix + "1")) continue;
    std::string bridge = "trbr" + std::to_string(index);
    if (run_ip({"link", "add", bridge, "type", "bridge"}).status != 0) continue;
    net.index_ = index;
    net.bridge_ = bridge;
    net.bridge_address_ = prefix + "1";
  }
  if (net.index_ < 0)
    return fail(Error::Code::kUnavailable, "no free bridge name and subnet in 10.160.0.0/12");
  auto undo = [&](const Error& error) -> Error {
    (void)net.remove();
    return error;
  };
  const std::string prefix = subnet_prefix(net.index_);
  for (const std::vector<std::string>& step : std::vector<std::vector<std::string>>{
           {"addr", "add", net.bridge_address_ + "/24", "dev", net.bridge_},
           {"link", "set", net.bridge_, "up"}})
    if (Status ok = ip(step); !ok) return undo(ok.error());
  for (int k = 0; k < hosts; ++k) {
    Host host;
    host.name = "trellis-" + std::to_string(net.index_) + "-" + std::to_string(k);
    host.address = prefix + std::to_string(k + 2);
    std::string veth = "tv" + std::to_string(net.index_) + "-" + std::to_string(k);
    if (Status ok = ip({"netns", "add", host.name}); !ok) return undo(ok.error());
    net.hosts_.push_back(host);
    for (const std::vector<std::string>& step : std::vector<std::vector<std::string>>{
             {"link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", host.name},
             {"link", "set", veth, "master", net.bridge_, "up"},
             {"-n", host.name, "addr", "add", host.address + "/24", "dev", "eth0"},
             {"-n", host.name, "link", "set", "eth0", "up"},
             {"-n", host.name, "link", "set", "lo", "up"}})
      if (Status ok = ip(step); !ok) return undo(ok.error());
  }
  return net;
}

Status HostNetwork::remove() {
  std::string errors;
  for (const Host& host : hosts_) {
    IpRun run = run_ip({"netns", "del", host.name});
    // Gone already is what was wanted.
    if (run.status != 0 && run.output.find("No such file") == std::string::npos)
      errors += (errors.empty() ? "" : "; ") + host.name + ": " + run.output;
  }
  hosts_.clear();
  if (!bridge_.empty()) {
    IpRun run = run_ip({"link", "del", bridge_});
    if (run.status != 0 && run.output.find("Cannot find device") == std::string::npos)
      errors += (errors.empty() ? "" : "; ") + bridge_ + ": " + run.output;
    bridge_.clear();
  }
  if (!errors.empty())
    return fail(Error::Code::kUnavailable, "removing the host network: " + errors);
  return Ok{};
}

Status HostNetwork::save(const std::string& file) const {
  nlohmann::json hosts = nlohmann::json::array();
  for (const Host& host : hosts_) hosts.push_back({{"name", host.name}, {"address", host.address}});
  nlohmann::json out = {{"index", index_},
                        {"bridge", bridge_},
                        {"bridge_address", bridge_address_},
                        {"hosts", hosts}};
  std::string temporary = file + ".tmp";
  {
    std::ofstream stream(temporary, std::ios::trunc);
    stream << out.dump(2) << "\n";
    if (!stream) return fail(Error::Code::kUnavailable, "cannot write " + temporary);
  }
  if (std::rename(temporary.c_str(), file.c_str()) != 0)
    return fail(Error::Code::kUnavailable, "cannot write " + file);
  return Ok{};
}

Result<HostNetwork> HostNetwork::load(const std::string& file) {
  std::ifstream in(file);
  if (!in) return fail(Error::Code::kNotFound, file + ": cannot be read");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  auto bad = [&](const std::string& what) { return fail(file + ": " + what); };
  if (!j.is_object() || !j["index"].is_number_integer() || !j["bridge"].is_string() ||
      !j["bridge_address"].is_string() || !j["hosts"].is_array())
    return bad("not a host network (index, bridge, bridge_address, hosts)");
  HostNetwork net;
  net.index_ = j["index"].get<int>();
  net.bridge_ = j["bridge"].get<std::string>();
  net.bridge_address_ = j["bridge_address"].get<std::string>();
  // Only names this code makes are ever deleted.
  if (!net.bridge_.starts_with("trbr")) return bad("bridge '" + net.bridge_ + "' is not ours");
  for (const nlohmann::json& h : j["hosts"]) {
    if (!h.is_object() || !h["name"].is_string() || !h["address"].is_string())
      return bad("a host without name and address");
    Host host{h["name"].get<std::string>(), h["address"].get<std::string>()};
    if (!host.name.starts_with("trellis-")) return bad("namespace '" + host.name + "' is not ours");
    net.hosts_.push_back(std::move(host));
  }
  return net;
}

}  // namespace trellis
