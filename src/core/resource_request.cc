#include "core/resource_request.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

namespace trellis {
namespace {

constexpr int64_t kMostCount = 1 << 20;

// A generic resource's or GPU type's name: letters, digits and "_-./" (what stays one word in the
// stored text, between its separators).
bool is_name(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == '/';
  });
}

// "name" or "name:type", as a counted resource is kept.
bool is_name_list(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return is_name(text);
  return is_name(text.substr(0, colon)) && is_name(text.substr(colon + 1));
}

bool parse_int(std::string_view text, int64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string_view sharing_name(NodeSharing sharing) {
  switch (sharing) {
    case NodeSharing::kPartition:
      return "partition";
    case NodeSharing::kExclusive:
      return "exclusive";
    case NodeSharing::kExclusiveUser:
      return "user";
    case NodeSharing::kShared:
      return "shared";
  }
  return "partition";
}

// The constraint's terms: alternatives ('|') of conjunctions ('&' or ',').
std::vector<std::vector<std::string>> constraint_terms(std::string_view text) {
  std::vector<std::vector<std::string>> alternatives(1);
  std::string word;
  auto end_word = [&] {
    alternatives.back().push_back(word);
    word.clear();
  };
  for (char c : text) {
    if (c == '|') {
      end_word();
      alternatives.emplace_back();
    } else if (c == '&' || c == ',') {
      end_word();
    } else {
      word += c;
    }
  }
  end_word();
  return alternatives;
}

}  // namespace

bool ResourceRequest::asks_resources() const {
  return cpus_per_task > 0 || mem_per_node_mb >= 0 || mem_per_cpu_mb > 0 || mem_per_gpu_mb > 0 ||
         asks_gpus() || cpus_per_gpu > 0 || !counts.empty();
}

std::string encode_resource_request(const ResourceRequest& r) {
  std::ostringstream out;
  auto field = [&](std::string_view name, const std::string& value) {
    if (out.tellp() > 0) out << ' ';
    out << name << '=' << value;
  };
  if (r.cpus_per_task > 0) field("cpus_per_task", std::to_string(r.cpus_per_task));
  if (r.mem_per_node_mb >= 0) field("mem", std::to_string(r.mem_per_node_mb));
  if (r.mem_per_cpu_mb > 0) field("mem_per_cpu", std::to_string(r.mem_per_cpu_mb));
  if (r.mem_per_gpu_mb > 0) field("mem_per_gpu", std::to_string(r.mem_per_gpu_mb));
  if (r.gpus > 0) field("gpus", std::to_string(r.gpus));
  if (r.gpus_per_node > 0) field("gpus_per_node", std::to_string(r.gpus_per_node));
  if (r.gpus_per_task > 0) field("gpus_per_task", std::to_string(r.gpus_per_task));
  if (r.cpus_per_gpu > 0) field("cpus_per_gpu", std::to_string(r.cpus_per_gpu));
  if (!r.gpu_type.empty()) field("gpu_type", r.gpu_type);
  if (!r.counts.empty()) {
    std::string gres;
    for (const auto& [name, count] : r.counts)
      gres += (gres.empty() ? "" : ",") + name + ":" + std::to_string(count);
    field("gres", gres);
  }
  if (r.sharing != NodeSharing::kPartition) field("sharing", std::string(sharing_name(r.sharing)));
  if (!r.constraint.empty()) field("constraint", r.constraint);
  return out.str();
}

Result<ResourceRequest> decode_resource_request(std::string_view text) {
  ResourceRequest r;
  std::istringstream in{std::string(text)};
  for (std::string item; in >> item;) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) return fail("resources: '" + item + "' is not name=value");
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    int64_t n = 0;
    auto number = [&](int64_t least) -> Status {
      if (!parse_int(value, n) || n < least)
        return fail("resources: " + name + "='" + value + "' is not a number of at least " +
                    std::to_string(least));
      return Ok{};
    };
    if (name == "cpus_per_task" || name == "gpus" || name == "gpus_per_node" ||
        name == "gpus_per_task" || name == "cpus_per_gpu") {
      if (Status ok = number(1); !ok) return ok.error();
      if (n > kMostCount) return fail("resources: " + name + "='" + value + "' is too large");
      int& field = name == "cpus_per_task"   ? r.cpus_per_task
                   : name == "gpus"          ? r.gpus
                   : name == "gpus_per_node" ? r.gpus_per_node
                   : name == "gpus_per_task" ? r.gpus_per_task
                                             : r.cpus_per_gpu;
      field = static_cast<int>(n);
    } else if (name == "mem" || name == "mem_per_cpu" || name == "mem_per_gpu") {
      if (Status ok = number(name == "mem" ? 0 : 1); !ok) return ok.error();
      (name == "mem"           ? r.mem_per_node_mb
       : name == "mem_per_cpu" ? r.mem_per_cpu_mb
                               : r.mem_per_gpu_mb) = n;
    } else if (name == "gpu_type") {
      if (!is_name(value)) return fail("resources: gpu_type='" + value + "' is not a name");
      r.gpu_type = value;
    } else if (name == "gres") {
      std::istringstream items(value);
      for (std::string one; std::getline(items, one, ',');) {
        size_t colon = one.rfind(':');
        int64_t count = 0;
        if (colon == std::string::npos || colon == 0 || !is_name_list(one.substr(0, colon)) ||
            !parse_int(std::string_view(one).substr(colon + 1), count) || count < 1)
          return fail("resources: gres '" + one + "' is not NAME:COUNT");
        r.counts[one.substr(0, colon)] = count;
      }
    } else if (name == "sharing") {
      if (value == "partition")
        r.sharing = NodeSharing::kPartition;
      else if (value == "exclusive")
        r.sharing = NodeSharing::kExclusive;
      else if (value == "user")
        r.sharing = NodeSharing::kExclusiveUser;
      else if (value == "shared")
        r.sharing = NodeSharing::kShared;
      else
        return fail("resources: sharing='" + value +
                    "'; expected partition, exclusive, user or shared");
    } else if (name == "constraint") {
      if (Status ok = check_constraint(value); !ok) return ok.error();
      r.constraint = value;
    } else {
      return fail("resources: unknown field '" + name + "'");
    }
  }
  return r;
}

Result<int> parse_gpu_count(std::string_view text, std::string_view option, std::string& type) {
  std::string given_type;
  std::string_view count = text;
  if (size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    given_type = std::string(text.substr(0, colon));
    count = text.substr(colon + 1);
    if (!is_name(given_type))
      return fail(std::string(option) + ": '" + std::string(text) + "' is not [TYPE:]COUNT");
  }
  int64_t n = 0;
  if (!parse_int(count, n) || n < 1 || n > kMostCount)
    return fail(std::string(option) + ": '" + std::string(text) +
                "' is not [TYPE:]COUNT (a count of at least 1)");
  if (!given_type.empty()) {
    if (!type.empty() && type != given_type)
      return fail(std::string(option) + ": GPU type '" + given_type + "' differs from '" + type +
                  "' asked before (a job's GPUs are of one type)");
    type = given_type;
  }
  return static_cast<int>(n);
}

Status apply_gres(std::string_view text, ResourceRequest& request) {
  std::istringstream items{std::string(text)};
  for (std::string one; std::getline(items, one, ',');) {
    if (one.empty()) continue;
    // NAME[:TYPE][:COUNT]: the last field is the count when it is a number.
    std::vector<std::string> fields;
    std::istringstream parts(one);
    for (std::string f; std::getline(parts, f, ':');) fields.push_back(f);
    int64_t count = 1;
    if (fields.size() > 1 && parse_int(fields.back(), count)) fields.pop_back();
    if (fields.empty() || fields.size() > 2 || !is_name(fields[0]) ||
        (fields.size() == 2 && !is_name(fields[1])) || count < 1 || count > kMostCount)
      return fail("--gres: '" + one +
                  "' is not NAME[:TYPE][:COUNT] (names of letters, digits and _-./)");
    if (fields[0] == "gpu") {
      if (fields.size() == 2) {
        if (!request.gpu_type.empty() && request.gpu_type != fields[1])
          return fail("--gres: GPU type '" + fields[1] + "' differs from '" + request.gpu_type +
                      "'");
        request.gpu_type = fields[1];
      }
      request.gpus_per_node = static_cast<int>(count);
    } else {
      request.counts[fields.size() == 2 ? fields[0] + ":" + fields[1] : fields[0]] = count;
    }
  }
  return Ok{};
}

bool is_resource_option(std::string_view option) {
  static constexpr std::string_view kNames[] = {"cpus-per-task", "mem",           "mem-per-cpu",
                                                "mem-per-gpu",   "gres",          "gpus",
                                                "gpus-per-node", "gpus-per-task", "cpus-per-gpu",
                                                "exclusive",     "oversubscribe", "constraint"};
  return std::find(std::begin(kNames), std::end(kNames), option) != std::end(kNames);
}

Status apply_resource_option(std::string_view option, std::string_view value, ResourceRequest& r) {
  const std::string name = "--" + std::string(option);
  auto count = [&](int& field) -> Status {
    int64_t n = 0;
    if (!parse_int(value, n) || n < 1 || n > kMostCount)
      return fail(name + ": '" + std::string(value) + "' is not a count of at least 1");
    field = static_cast<int>(n);
    return Ok{};
  };
  auto memory = [&](int64_t& field, int64_t least) -> Status {
    Result<int64_t> mb = parse_memory_mb(value, name);
    if (!mb) return mb.error();
    if (*mb < least) return fail(name + ": '" + std::string(value) + "' is not a size above 0");
    r.mem_per_node_mb = -1;
    r.mem_per_cpu_mb = 0;
    r.mem_per_gpu_mb = 0;
    field = *mb;
    return Ok{};
  };
  auto gpus = [&](int& field) -> Status {
    Result<int> n = parse_gpu_count(value, name, r.gpu_type);
    if (!n) return n.error();
    field = *n;
    return Ok{};
  };
  if (option == "cpus-per-task") return count(r.cpus_per_task);
  if (option == "cpus-per-gpu") return count(r.cpus_per_gpu);
  if (option == "mem") return memory(r.mem_per_node_mb, 0);
  if (option == "mem-per-cpu") return memory(r.mem_per_cpu_mb, 1);
  if (option == "mem-per-gpu") return memory(r.mem_per_gpu_mb, 1);
  if (option == "gres") {
    // A later --gres replaces what an earlier one asked, as Slurm's command line replaces a
    // directive's; "none" asks for none.
    r.gpus_per_node = 0;
    r.counts.clear();
    if (value.empty() || value == "none") return Ok{};
    return apply_gres(value, r);
  }
  if (option == "gpus") return gpus(r.gpus);
  if (option == "gpus-per-node") return gpus(r.gpus_per_node);
  if (option == "gpus-per-task") return gpus(r.gpus_per_task);
  if (option == "exclusive") {
    if (value.empty())
      r.sharing = NodeSharing::kExclusive;
    else if (value == "user" || value == "mcs")
      r.sharing = NodeSharing::kExclusiveUser;
    else
      return fail(name + ": '" + std::string(value) + "'; expected no value, user or mcs");
    return Ok{};
  }
  if (option == "oversubscribe") {
    r.sharing = NodeSharing::kShared;
    return Ok{};
  }
  if (option == "constraint") {
    if (Status ok = check_constraint(value); !ok) return ok.error();
    r.constraint = std::string(value);
    return Ok{};
  }
  return fail(name + " is not an option of a job's resources");
}

Status check_constraint(std::string_view constraint) {
  if (constraint.find_first_of("[]*() \t\n\r\v\f") != std::string_view::npos)
    return fail("--constraint: '" + std::string(constraint) +
                "': brackets, counts and spaces are not taken; use FEATURE, A&B or A|B");
  for (const auto& alternative : constraint_terms(constraint))
    for (const std::string& word : alternative)
      if (word.empty() && !constraint.empty())
        return fail("--constraint: '" + std::string(constraint) + "' has an empty feature name");
  return Ok{};
}

bool meets_constraint(const NodeInventory& node, std::string_view constraint) {
  if (constraint.empty()) return true;
  for (const auto& alternative : constraint_terms(constraint))
    if (std::all_of(alternative.begin(), alternative.end(),
                    [&](const std::string& f) { return node.has_feature(f); }))
      return true;
  return false;
}

Result<NodeDemand> node_demand(const ResourceRequest& r, int tasks, int nodes,
                               const NodeInventory& node, int64_t default_mem_per_cpu_mb) {
  NodeDemand d;
  d.counts = r.counts;
  d.gpu_type = r.gpu_type;
  d.constraint = r.constraint;
  tasks = std::max(tasks, 1);
  nodes = std::max(nodes, 1);
  d.same_user_only = r.sharing == NodeSharing::kExclusiveUser;
  if (r.gpus_per_node > 0)
    d.gpus = r.gpus_per_node;
  else if (r.gpus_per_task > 0)
    d.gpus = r.gpus_per_task * tasks;
  else if (r.gpus > 0)
    d.gpus = (r.gpus + nodes - 1) / nodes;
  const int per_task = std::max(r.cpus_per_task, 1);
  d.cores = std::max({tasks * per_task, d.gpus * r.cpus_per_gpu, 1});
  // Threads: a task of cpus_per_task CPUs takes whole cores (Slurm's CR_Core).
  if (node.threads_per_core > 1 && r.cpus_per_task > 0)
    d.cores = std::max(1, (tasks * per_task + node.threads_per_core - 1) / node.threads_per_core);
  if (r.mem_per_node_mb == 0)
    d.memory_mb = node.memory_mb;
  else if (r.mem_per_node_mb > 0)
    d.memory_mb = r.mem_per_node_mb;
  else if (r.mem_per_cpu_mb > 0)
    d.memory_mb = r.mem_per_cpu_mb * d.cores * node.threads_per_core;
  else if (r.mem_per_gpu_mb > 0)
    d.memory_mb = r.mem_per_gpu_mb * std::max(d.gpus, 1);
  else if (default_mem_per_cpu_mb > 0)
    d.memory_mb = default_mem_per_cpu_mb * d.cores;
  else
    d.memory_mb = node.cores() > 0 ? node.memory_mb * d.cores / node.cores() : 0;
  if (r.sharing == NodeSharing::kExclusive && r.asks_gpus() && node.gpus_of_type(r.gpu_type) == 0)
    return fail("GPUs" + (r.gpu_type.empty() ? std::string() : " of type " + r.gpu_type) +
                " asked, and its nodes have none");
  // What the node can never hold.
  if (d.cores > node.cores())
    return fail(std::to_string(d.cores) + " cores per node asked, its nodes have " +
                std::to_string(node.cores()));
  if (d.memory_mb > node.memory_mb)
    return fail(format_memory_mb(d.memory_mb) + " of memory per node asked, its nodes have " +
                format_memory_mb(node.memory_mb));
  if (d.gpus > node.gpus_of_type(r.gpu_type))
    return fail(std::to_string(d.gpus) + " GPUs" +
                (r.gpu_type.empty() ? std::string() : " of type " + r.gpu_type) +
                " per node asked, its nodes have " + std::to_string(node.gpus_of_type(r.gpu_type)));
  for (const auto& [name, count] : d.counts) {
    auto have = node.counts.find(name);
    if (have == node.counts.end() || have->second < count)
      return fail(std::to_string(count) + " " + name + " per node asked, its nodes have " +
                  std::to_string(have == node.counts.end() ? 0 : have->second));
  }
  if (!meets_constraint(node, r.constraint))
    return fail("its nodes have no features '" + r.constraint + "'");
  // Whole nodes: everything of the node, once what was asked is known to fit one.
  if (r.sharing == NodeSharing::kExclusive) {
    d.whole = true;
    d.cores = node.cores();
    d.memory_mb = node.memory_mb;
    d.gpus = node.gpus_of_type(r.gpu_type);
  }
  return d;
}

std::string tres_text(const NodeDemand& d, int nodes, const NodeInventory& node) {
  std::string out = "cpu=" + std::to_string(int64_t{d.cores} * node.threads_per_core * nodes) +
                    ",mem=" + format_memory_mb(d.memory_mb * nodes) +
                    ",node=" + std::to_string(nodes) +
                    ",billing=" + std::to_string(int64_t{d.cores} * node.threads_per_core * nodes);
  if (d.gpus > 0) out += ",gres/gpu=" + std::to_string(int64_t{d.gpus} * nodes);
  return out;
}

}  // namespace trellis
