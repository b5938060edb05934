#include "core/node_inventory.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "core/key_value.h"

namespace trellis {
namespace {

// The largest node a description may give: beyond any machine sold, and far from overflow.
constexpr int kMostCores = 1 << 14;
constexpr int kMostGpus = 64;  // GPU sets are 64-bit masks (alloc/node_pool.h)
constexpr int64_t kMostMemoryMb = int64_t{1} << 40;

bool parse_int(std::string_view text, int64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

Result<int> positive(std::string_view key, std::string_view text, int most) {
  int64_t n = 0;
  if (!parse_int(text, n) || n < 1 || n > most)
    return fail(std::string(key) + "='" + std::string(text) +
                "': expected a whole number from 1 to " + std::to_string(most));
  return static_cast<int>(n);
}

std::vector<std::string_view> split(std::string_view text, char by) {
  std::vector<std::string_view> out;
  size_t from = 0;
  while (from <= text.size()) {
    size_t at = text.find(by, from);
    out.push_back(
        text.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) break;
    from = at + 1;
  }
  return out;
}

}  // namespace

int NodeInventory::numa_of(int core) const {
  const int n = cores();
  return n <= 0 || numa_nodes <= 1 ? 0 : std::min(numa_nodes - 1, core * numa_nodes / n);
}

bool NodeInventory::has_feature(std::string_view feature) const {
  return std::find(features.begin(), features.end(), feature) != features.end();
}

int NodeInventory::gpus_of_type(std::string_view type) const {
  if (type.empty()) return static_cast<int>(gpus.size());
  return static_cast<int>(
      std::count_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return g.type == type; }));
}

std::string slurm_node_line(const NodeInventory& node) {
  return "CPUs=" + std::to_string(node.cpus()) +
         " Boards=1 SocketsPerBoard=" + std::to_string(node.sockets) +
         " CoresPerSocket=" + std::to_string(node.cores_per_socket) +
         " ThreadsPerCore=" + std::to_string(node.threads_per_core) +
         " RealMemory=" + std::to_string(node.memory_mb);
}

std::string gres_text(const NodeInventory& node) {
  // GPUs grouped by type, in the order of their first appearance.
  std::vector<std::pair<std::string, int>> by_type;
  for (const Gpu& gpu : node.gpus) {
    auto it = std::find_if(by_type.begin(), by_type.end(),
                           [&](const auto& t) { return t.first == gpu.type; });
    if (it == by_type.end())
      by_type.emplace_back(gpu.type, 1);
    else
      ++it->second;
  }
  std::string out;
  for (const auto& [type, count] : by_type)
    out += (out.empty() ? "" : ",") + std::string("gpu") + (type.empty() ? "" : ":" + type) + ":" +
           std::to_string(count);
  for (const auto& [name, count] : node.counts)
    out += (out.empty() ? "" : ",") + name + ":" + std::to_string(count);
  return out.empty() ? "(null)" : out;
}

Result<int64_t> parse_memory_mb(std::string_view text, std::string_view what) {
  auto wrong = [&] {
    return fail(std::string(what) + ": '" + std::string(text) +
                "' is not a memory size (MiB, or a number with K, M, G or T)");
  };
  if (text.empty()) return wrong();
  int64_t factor_kb = 1024;  // MiB when bare
  std::string_view digits = text;
  switch (text.back()) {
    case 'K':
    case 'k':
      factor_kb = 1;
      digits.remove_suffix(1);
      break;
    case 'M':
    case 'm':
      factor_kb = 1024;
      digits.remove_suffix(1);
      break;
    case 'G':
    case 'g':
      factor_kb = 1024 * 1024;
      digits.remove_suffix(1);
      break;
    case 'T':
    case 't':
      factor_kb = int64_t{1024} * 1024 * 1024;
      digits.remove_suffix(1);
      break;
    default:
      break;
  }
  int64_t n = 0;
  if (!parse_int(digits, n) || n < 0 || n > kMostMemoryMb * 1024 / factor_kb) return wrong();
  // Whole MiB, rounded up: a job that asks for 1500K gets 2M, never less than it asked.
  return (n * factor_kb + 1023) / 1024;
}

std::string format_memory_mb(int64_t mb) {
  if (mb > 0 && mb % (1024 * 1024) == 0) return std::to_string(mb / (1024 * 1024)) + "T";
  if (mb > 0 && mb % 1024 == 0) return std::to_string(mb / 1024) + "G";
  return std::to_string(mb) + "M";
}

Result<NodeInventory> parse_node_inventory(std::string_view text) {
  static const std::set<std::string> kKeys = {
      "cores", "sockets", "cores_per_socket", "threads", "numa",
      "mem",   "gpus",    "gpu_files",        "gres",    "features"};
  NodeInventory node;
  std::optional<int> cores, per_socket;
  std::vector<std::string> gpu_files;
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return fail("node type: '" + std::string(item) + "' is not key=value");
    std::string key(item.substr(0, eq));
    std::string_view value = item.substr(eq + 1);
    if (!kKeys.contains(key)) {
      std::string known;
      for (const std::string& k : kKeys) known += (known.empty() ? "" : ", ") + k;
      return fail("node type: unknown key '" + key + "' (known: " + known + ")");
    }
    if (key == "cores" || key == "sockets" || key == "cores_per_socket" || key == "threads" ||
        key == "numa") {
      Result<int> n = positive(key, value, key == "threads" ? 8 : kMostCores);
      if (!n) return fail("node type: " + n.error().message);
      if (key == "cores") cores = *n;
      if (key == "sockets") node.sockets = *n;
      if (key == "cores_per_socket") per_socket = *n;
      if (key == "threads") node.threads_per_core = *n;
      if (key == "numa") node.numa_nodes = *n;
    } else if (key == "mem") {
      Result<int64_t> mb = parse_memory_mb(value, "node type: mem");
      if (!mb) return mb.error();
      node.memory_mb = *mb;
    } else if (key == "gpus") {
      // [TYPE:]N
      std::string type;
      std::string_view count = value;
      if (size_t colon = value.rfind(':'); colon != std::string_view::npos) {
        type = std::string(value.substr(0, colon));
        count = value.substr(colon + 1);
      }
      Result<int> n = positive("gpus", count, kMostGpus);
      if (!n) return fail("node type: " + n.error().message);
      for (int i = 0; i < *n; ++i)
        node.gpus.push_back({type, "", "/dev/nvidia" + std::to_string(i), 0});
    } else if (key == "gres") {
      for (std::string_view one : split(value, '+')) {
        size_t colon = one.rfind(':');
        int64_t n = 0;
        if (colon == std::string_view::npos || colon == 0 || !parse_int(one.substr(colon + 1), n) ||
            n < 1)
          return fail("node type: gres='" + std::string(one) + "': expected NAME:COUNT");
        node.counts[std::string(one.substr(0, colon))] += n;
      }
    } else if (key == "features") {
      for (std::string_view f : split(value, '+'))
        if (!f.empty()) node.features.emplace_back(f);
    } else if (key == "gpu_files") {
      for (std::string_view file : split(value, '+')) {
        if (file.empty() || file.front() != '/')
          return fail("node type: gpu_files: '" + std::string(file) +
                      "' is not an absolute path (files are separated by '+')");
        gpu_files.emplace_back(file);
      }
    }
  }
  if (!gpu_files.empty()) {
    if (gpu_files.size() != node.gpus.size())
      return fail("node type: gpu_files names " + std::to_string(gpu_files.size()) + " files for " +
                  std::to_string(node.gpus.size()) + " GPUs");
    for (size_t i = 0; i < gpu_files.size(); ++i) node.gpus[i].device = gpu_files[i];
  }
  if (per_socket) node.cores_per_socket = *per_socket;
  if (cores) {
    if (per_socket && *cores != node.sockets * *per_socket)
      return fail("node type: cores=" + std::to_string(*cores) +
                  " is not sockets x cores_per_socket (" +
                  std::to_string(node.sockets * *per_socket) + ")");
    if (*cores % node.sockets != 0)
      return fail("node type: cores=" + std::to_string(*cores) + " do not split evenly over " +
                  std::to_string(node.sockets) + " sockets");
    node.cores_per_socket = *cores / node.sockets;
  }
  if (node.numa_nodes > node.cores())
    return fail("node type: numa=" + std::to_string(node.numa_nodes) + " is more than its " +
                std::to_string(node.cores()) + " cores");
  // GPUs sit on the NUMA nodes in turn, as the slots of a real board do.
  for (size_t i = 0; i < node.gpus.size(); ++i)
    node.gpus[i].numa =
        static_cast<int>(i * node.numa_nodes / std::max<size_t>(1, node.gpus.size()));
  return node;
}

bool gpu_files_given(const NodeInventory& node) {
  for (size_t i = 0; i < node.gpus.size(); ++i)
    if (node.gpus[i].device != "/dev/nvidia" + std::to_string(i)) return true;
  return false;
}

std::string node_inventory_text(const NodeInventory& node) {
  std::string out =
      "sockets=" + std::to_string(node.sockets) + ",cores=" + std::to_string(node.cores()) +
      ",threads=" + std::to_string(node.threads_per_core) +
      ",numa=" + std::to_string(node.numa_nodes) + ",mem=" + format_memory_mb(node.memory_mb);
  if (!node.gpus.empty()) {
    const std::string& type = node.gpus.front().type;
    out += ",gpus=" + (type.empty() ? "" : type + ":") + std::to_string(node.gpus.size());
    if (gpu_files_given(node)) {
      out += ",gpu_files=";
      for (size_t i = 0; i < node.gpus.size(); ++i) out += (i > 0 ? "+" : "") + node.gpus[i].device;
    }
  }
  std::string gres;
  for (const auto& [name, count] : node.counts)
    gres += (gres.empty() ? "" : "+") + name + ":" + std::to_string(count);
  if (!gres.empty()) out += ",gres=" + gres;
  std::string features;
  for (const std::string& f : node.features) features += (features.empty() ? "" : "+") + f;
  if (!features.empty()) out += ",features=" + features;
  return out;
}

std::string shortfall(const NodeInventory& configured, const NodeInventory& found) {
  std::vector<std::string> lacks;
  auto compare = [&](const char* what, int64_t want, int64_t have) {
    if (have < want)
      lacks.push_back(std::string(what) + ": " + std::to_string(want) + " configured, " +
                      std::to_string(have) + " found");
  };
  compare("sockets", configured.sockets, found.sockets);
  compare("cores", configured.cores(), found.cores());
  compare("threads per core", configured.threads_per_core, found.threads_per_core);
  compare("NUMA nodes", configured.numa_nodes, found.numa_nodes);
  if (found.memory_mb * 100 < configured.memory_mb * 98)
    lacks.push_back("memory: " + format_memory_mb(configured.memory_mb) + " configured, " +
                    format_memory_mb(found.memory_mb) + " found");
  compare("GPUs", static_cast<int64_t>(configured.gpus.size()),
          static_cast<int64_t>(found.gpus.size()));
  std::string out;
  for (const std::string& l : lacks) out += (out.empty() ? "" : "; ") + l;
  return out;
}

}  // namespace trellis
