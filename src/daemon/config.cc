#include "daemon/config.h"

#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include <toml++/toml.h>

namespace trellis {
namespace {

// Reads the settings of one table, naming the file, table and key in every error.
class TableReader {
 public:
  TableReader(const toml::table* table, std::string where)
      : table_(table), where_(std::move(where)) {}

  Status string(std::string_view key, std::string& out) {
    const toml::node* node = get(key);
    if (!node) return Ok{};
    if (!node->is_string()) return wrong(key, "a string");
    out = node->as_string()->get();
    return Ok{};
  }
  Status number(std::string_view key, double& out, double minimum) {
    const toml::node* node = get(key);
    if (!node) return Ok{};
    if (node->is_integer()) {
      out = static_cast<double>(node->as_integer()->get());
    } else if (node->is_floating_point()) {
      out = node->as_floating_point()->get();
    } else {
      return wrong(key, "a number");
    }
    // Finite and at most a billion (about 30 years of seconds): what is converted to milliseconds
    // later must fit.
    if (!(out >= minimum && out <= 1e9))
      return wrong(key, "a number from " + std::to_string(minimum) + " to 1e9");
    return Ok{};
  }
  Status integer(std::string_view key, int& out, int minimum) {
    const toml::node* node = get(key);
    if (!node) return Ok{};
    if (!node->is_integer() || node->as_integer()->get() < minimum ||
        node->as_integer()->get() > 1'000'000'000)
      return wrong(key, "an integer >= " + std::to_string(minimum));
    out = static_cast<int>(node->as_integer()->get());
    return Ok{};
  }
  Status boolean(std::string_view key, bool& out) {
    const toml::node* node = get(key);
    if (!node) return Ok{};
    if (!node->is_boolean()) return wrong(key, "true or false");
    out = node->as_boolean()->get();
    return Ok{};
  }
  Status strings(std::string_view key, std::vector<std::string>& out) {
    const toml::node* node = get(key);
    if (!node) return Ok{};
    const toml::array* array = node->as_array();
    if (!array) return wrong(key, "an array of strings");
    out.clear();
    for (const toml::node& item : *array) {
      if (!item.is_string()) return wrong(key, "an array of strings");
      out.push_back(item.as_string()->get());
    }
    return Ok{};
  }
  Status integers(std::string_view key, std::vector<int>& out) {
    const toml::node* node = get(key);
    if (!node) return Ok{};
    const toml::array* array = node->as_array();
    if (!array) return wrong(key, "an array of uids");
    out.clear();
    // Uids are kept as int, so one beyond INT_MAX would wrap to another user's.
    for (const toml::node& item : *array) {
      if (!item.is_integer() || item.as_integer()->get() < 0 ||
          item.as_integer()->get() > std::numeric_limits<int>::max())
        return wrong(
            key, "an array of uids (0 to " + std::to_string(std::numeric_limits<int>::max()) + ")");
      out.push_back(static_cast<int>(item.as_integer()->get()));
    }
    return Ok{};
  }
  // Keys this program does not know are errors: a misspelt setting must not be ignored.
  Status no_unknown_keys(std::initializer_list<std::string_view> known) {
    if (!table_) return Ok{};
    for (const auto& [key, value] : *table_) {
      bool found = false;
      for (std::string_view k : known) found = found || key.str() == k;
      if (!found) return fail(where_ + ": unknown setting '" + std::string(key.str()) + "'");
    }
    return Ok{};
  }
  Error wrong(std::string_view key, const std::string& expected) const {
    return fail(where_ + " " + std::string(key) + ": expected " + expected);
  }

 private:
  const toml::node* get(std::string_view key) const { return table_ ? table_->get(key) : nullptr; }
  const toml::table* table_;
  std::string where_;
};

#define TRELLIS_TRY(expr)          \
  do {                             \
    if (auto ok_ = (expr); !ok_) { \
      return ok_.error();          \
    }                              \
  } while (false)

}  // namespace

Result<ClusterConfig> parse_cluster_config(std::string_view text, std::string_view origin) {
  // toml++ reports syntax errors by exception (its build enables them); they stop here.
  toml::table root;
  try {
    root = toml::parse(text, std::string(origin));
  } catch (const toml::parse_error& e) {
    return fail(std::string(origin) + ":" + std::to_string(e.source().begin.line) + ": " +
                std::string(e.description()));
  }
  for (const auto& [key, value] : root) {
    if (key.str() != "cluster" && key.str() != "controller" && key.str() != "partition" &&
        key.str() != "nodetype" && key.str() != "priority")
      return fail(std::string(origin) + ": unknown table [" + std::string(key.str()) +
                  "] (expected [cluster], [controller], [priority], [[nodetype]] and "
                  "[[partition]])");
  }
  ClusterConfig config;
  TableReader cluster(root["cluster"].as_table(), std::string(origin) + ": [cluster]");
  TRELLIS_TRY(cluster.no_unknown_keys({"machine", "store", "controllers", "munge_socket"}));
  TRELLIS_TRY(cluster.string("machine", config.machine));
  TRELLIS_TRY(cluster.string("store", config.store));
  TRELLIS_TRY(cluster.strings("controllers", config.controllers));
  TRELLIS_TRY(cluster.string("munge_socket", config.munge_socket));
  if (config.machine.empty())
    return fail(std::string(origin) + ": [cluster] machine is missing (e.g. \"torus:4x4x4\")");
  if (config.store.empty())
    return fail(std::string(origin) + ": [cluster] store is missing (e.g. \"sqlite:state.db\")");

  ControllerSettings& c = config.controller;
  TableReader controller(root["controller"].as_table(), std::string(origin) + ": [controller]");
  TRELLIS_TRY(controller.no_unknown_keys({"listen",
                                          "port_file",
                                          "policy",
                                          "allocator",
                                          "heartbeat_interval",
                                          "heartbeat_misses",
                                          "node_failure",
                                          "default_time_limit",
                                          "max_time_limit",
                                          "kill_grace",
                                          "admins",
                                          "scheduler_lease",
                                          "allocation",
                                          "slice",
                                          "tree_fanout",
                                          "switch_fanout",
                                          "deadlock",
                                          "idle_detection",
                                          "activity_every",
                                          "max_job_test",
                                          "max_requeue",
                                          "node_failure_drain",
                                          "max_array_size",

                                          "mpi",
                                          "pmi_fanout",
                                          "batch_wait"}));
  TRELLIS_TRY(controller.string("listen", c.listen));
  TRELLIS_TRY(controller.string("port_file", c.port_file));
  TRELLIS_TRY(controller.string("policy", c.policy));
  TRELLIS_TRY(controller.string("allocator", c.allocator));
  TRELLIS_TRY(controller.number("heartbeat_interval", c.heartbeat_interval, 0.01));
  TRELLIS_TRY(controller.integer("heartbeat_misses", c.heartbeat_misses, 1));
  std::string failure = "requeue";
  TRELLIS_TRY(controller.string("node_failure", failure));
  if (failure == "requeue") {
    c.node_failure = NodeFailurePolicy::kRequeue;
  } else if (failure == "fail") {
    c.node_failure = NodeFailurePolicy::kFail;
  } else {
    return controller.wrong("node_failure", "\"requeue\" or \"fail\", found \"" + failure + "\"");
  }
  TRELLIS_TRY(controller.number("default_time_limit", c.default_time_limit, 1));
  TRELLIS_TRY(controller.number("max_time_limit", c.max_time_limit, 0));
  TRELLIS_TRY(controller.number("kill_grace", c.kill_grace, 0));
  TRELLIS_TRY(controller.integers("admins", c.admins));
  TRELLIS_TRY(controller.number("scheduler_lease", c.scheduler_lease, 0.05));
  std::string allocation = "lease";
  TRELLIS_TRY(controller.string("allocation", allocation));
  if (allocation == "lease") {
    c.allocation = AllocationMode::kLease;
  } else if (allocation == "concurrent") {
    c.allocation = AllocationMode::kConcurrent;
  } else {
    return controller.wrong("allocation",
                            "\"lease\" or \"concurrent\", found \"" + allocation + "\"");
  }
  TRELLIS_TRY(controller.number("slice", c.slice, 0.005));
  // switch_fanout is the old name of tree_fanout (gang switches went down the first tree).
  TRELLIS_TRY(controller.integer("switch_fanout", c.tree_fanout, 1));
  if (c.tree_fanout > 64) return controller.wrong("switch_fanout", "at most 64");
  TRELLIS_TRY(controller.integer("tree_fanout", c.tree_fanout, 1));
  if (c.tree_fanout > 64) return controller.wrong("tree_fanout", "at most 64");
  TRELLIS_TRY(controller.integer("max_requeue", c.max_requeue, 1));
  TRELLIS_TRY(controller.integer("node_failure_drain", c.node_failure_drain, 1));
  std::string deadlock = "report";
  TRELLIS_TRY(controller.string("deadlock", deadlock));
  if (deadlock != "report" && deadlock != "kill")
    return controller.wrong("deadlock", "\"report\" or \"kill\", found \"" + deadlock + "\"");
  c.kill_deadlocked = deadlock == "kill";
  TRELLIS_TRY(controller.boolean("idle_detection", c.idle_detection));
  TRELLIS_TRY(controller.integer("activity_every", c.activity_every, 1));
  TRELLIS_TRY(controller.integer("max_job_test", c.max_job_test, 0));
  TRELLIS_TRY(controller.integer("max_array_size", c.max_array_size, 1));
  TRELLIS_TRY(controller.string("mpi", c.mpi));
  if (c.mpi != "auto" && c.mpi != "pmi1" && c.mpi != "pmix" && c.mpi != "none")
    return controller.wrong("mpi",
                            "\"auto\", \"pmi1\", \"pmix\" or \"none\", found \"" + c.mpi + "\"");
  TRELLIS_TRY(controller.integer("pmi_fanout", c.pmi_fanout, 1));
  if (c.pmi_fanout > 64) return controller.wrong("pmi_fanout", "at most 64");
  TRELLIS_TRY(controller.number("batch_wait", c.batch_wait, 0));
  if (c.batch_wait > 1) return controller.wrong("batch_wait", "at most 1 (second)");
  if (config.controllers.empty()) config.controllers.push_back(c.listen);
  PrioritySettings& p = config.priority;
  TableReader priority(root["priority"].as_table(), std::string(origin) + ": [priority]");
  TRELLIS_TRY(priority.no_unknown_keys({"fair_share", "half_life", "weight_age", "weight_fairshare",
                                        "weight_jobsize", "weight_qos", "max_age"}));
  TRELLIS_TRY(priority.string("fair_share", p.fair_share));
  if (p.fair_share != "fairtree" && p.fair_share != "classic" && p.fair_share != "none")
    return priority.wrong("fair_share",
                          "\"fairtree\", \"classic\" or \"none\", found \"" + p.fair_share + "\"");
  TRELLIS_TRY(priority.number("half_life", p.half_life, 0));
  TRELLIS_TRY(priority.number("weight_age", p.weight_age, 0));
  TRELLIS_TRY(priority.number("weight_fairshare", p.weight_fairshare, 0));
  TRELLIS_TRY(priority.number("weight_jobsize", p.weight_jobsize, 0));
  TRELLIS_TRY(priority.number("weight_qos", p.weight_qos, 0));
  TRELLIS_TRY(priority.number("max_age", p.max_age, 0));
  if (const toml::node* partitions = root.get("partition")) {
    const toml::array* list = partitions->as_array();
    if (!list)
      return fail(std::string(origin) + ": partition must be an array of tables ([[partition]])");
    int defaults = 0;
    for (size_t i = 0; i < list->size(); ++i) {
      const toml::table* table = list->get(i)->as_table();
      std::string where = std::string(origin) + ": [[partition]] " + std::to_string(i + 1);
      if (!table) return fail(where + ": expected a table");
      TableReader reader(table, where);
      TRELLIS_TRY(reader.no_unknown_keys({"name", "nodes", "default", "max_time", "default_time",
                                          "shared", "default_mem_per_cpu"}));
      PartitionConfig p;
      TRELLIS_TRY(reader.string("name", p.name));
      TRELLIS_TRY(reader.string("nodes", p.nodes));
      TRELLIS_TRY(reader.boolean("default", p.is_default));
      double minutes = 0;
      TRELLIS_TRY(reader.number("max_time", minutes, 0));
      p.max_time = minutes * 60;
      minutes = 0;
      TRELLIS_TRY(reader.number("default_time", minutes, 0));
      p.default_time = minutes * 60;
      TRELLIS_TRY(reader.boolean("shared", p.shared));
      std::string mem_per_cpu;
      TRELLIS_TRY(reader.string("default_mem_per_cpu", mem_per_cpu));
      if (!mem_per_cpu.empty()) {
        Result<int64_t> mb = parse_memory_mb(mem_per_cpu, where + ": default_mem_per_cpu");
        if (!mb) return mb.error();
        p.default_mem_per_cpu_mb = *mb;
      }
      if (p.name.empty() || p.name.find_first_of(" ,\t\n*") != std::string::npos)
        return fail(where + ": name '" + p.name + "' must be a word (no spaces, commas or '*')");
      for (const PartitionConfig& other : config.partitions)
        if (other.name == p.name) return fail(where + ": partition '" + p.name + "' twice");
      if (p.max_time > 0 && p.default_time > p.max_time)
        return fail(where + ": default_time is over max_time");
      defaults += p.is_default ? 1 : 0;
      config.partitions.push_back(std::move(p));
    }
    if (defaults > 1) return fail(std::string(origin) + ": more than one default partition");
  }
  if (const toml::node* types = root.get("nodetype")) {
    const toml::array* list = types->as_array();
    if (!list)
      return fail(std::string(origin) + ": nodetype must be an array of tables ([[nodetype]])");
    int catch_all = 0;
    for (size_t i = 0; i < list->size(); ++i) {
      const toml::table* table = list->get(i)->as_table();
      std::string where = std::string(origin) + ": [[nodetype]] " + std::to_string(i + 1);
      if (!table) return fail(where + ": expected a table");
      TableReader reader(table, where);
      TRELLIS_TRY(reader.no_unknown_keys({"name", "nodes", "resources"}));
      NodeTypeConfig t;
      TRELLIS_TRY(reader.string("name", t.name));
      TRELLIS_TRY(reader.string("nodes", t.nodes));
      TRELLIS_TRY(reader.string("resources", t.resources));
      if (t.name.empty() || t.name.find_first_of(" ,\t\n*") != std::string::npos)
        return fail(where + ": name '" + t.name + "' must be a word (no spaces, commas or '*')");
      for (const NodeTypeConfig& other : config.node_types)
        if (other.name == t.name) return fail(where + ": node type '" + t.name + "' twice");
      Result<NodeInventory> inventory = parse_node_inventory(t.resources);
      if (!inventory) return fail(where + " resources: " + inventory.error().message);
      t.inventory = std::move(*inventory);
      catch_all += t.nodes.empty() ? 1 : 0;
      config.node_types.push_back(std::move(t));
    }
    if (catch_all > 1)
      return fail(std::string(origin) +
                  ": more than one [[nodetype]] with nodes \"\" (every "
                  "node no other type names)");
  }
  return config;
}

Result<ClusterConfig> load_cluster_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fail(Error::Code::kNotFound, path + ": cannot read the cluster config");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_cluster_config(text.str(), path);
}

std::string format_cluster_config(const ClusterConfig& config) {
  toml::array controllers;
  for (const std::string& a : config.controllers) controllers.push_back(a);
  toml::array admins;
  for (int uid : config.controller.admins) admins.push_back(uid);
  const ControllerSettings& c = config.controller;
  toml::table root{
      {"cluster", toml::table{{"machine", config.machine},
                              {"store", config.store},
                              {"controllers", controllers},
                              {"munge_socket", config.munge_socket}}},
      {"controller",
       toml::table{
           {"listen", c.listen},
           {"port_file", c.port_file},
           {"policy", c.policy},
           {"allocator", c.allocator},
           {"heartbeat_interval", c.heartbeat_interval},
           {"heartbeat_misses", c.heartbeat_misses},
           {"node_failure", c.node_failure == NodeFailurePolicy::kFail ? "fail" : "requeue"},
           {"default_time_limit", c.default_time_limit},
           {"max_time_limit", c.max_time_limit},
           {"kill_grace", c.kill_grace},
           {"admins", admins},
           {"scheduler_lease", c.scheduler_lease},
           {"allocation", c.allocation == AllocationMode::kConcurrent ? "concurrent" : "lease"},
           {"slice", c.slice},
           {"tree_fanout", c.tree_fanout},
           {"max_requeue", c.max_requeue},
           {"node_failure_drain", c.node_failure_drain},
           {"deadlock", c.kill_deadlocked ? "kill" : "report"},
           {"idle_detection", c.idle_detection},
           {"activity_every", c.activity_every},
           {"max_job_test", c.max_job_test},
           {"max_array_size", c.max_array_size},

           {"mpi", c.mpi},
           {"pmi_fanout", c.pmi_fanout},
           {"batch_wait", c.batch_wait}}},
      {"priority", toml::table{{"fair_share", config.priority.fair_share},
                               {"half_life", config.priority.half_life},
                               {"weight_age", config.priority.weight_age},
                               {"weight_fairshare", config.priority.weight_fairshare},
                               {"weight_jobsize", config.priority.weight_jobsize},
                               {"weight_qos", config.priority.weight_qos},
                               {"max_age", config.priority.max_age}}},
  };
  if (!config.partitions.empty()) {
    toml::array partitions;
    for (const PartitionConfig& p : config.partitions)
      partitions.push_back(
          toml::table{{"name", p.name},
                      {"nodes", p.nodes},
                      {"default", p.is_default},
                      {"max_time", p.max_time / 60},
                      {"default_time", p.default_time / 60},
                      {"shared", p.shared},
                      {"default_mem_per_cpu", p.default_mem_per_cpu_mb > 0
                                                  ? format_memory_mb(p.default_mem_per_cpu_mb)
                                                  : std::string()}});
    root.insert("partition", std::move(partitions));
  }
  if (!config.node_types.empty()) {
    toml::array types;
    for (const NodeTypeConfig& t : config.node_types)
      types.push_back(
          toml::table{{"name", t.name}, {"nodes", t.nodes}, {"resources", t.resources}});
    root.insert("nodetype", std::move(types));
  }
  std::ostringstream out;
  out << "# Trellis cluster config (see trellisd --help)\n" << root << "\n";
  return out.str();
}

std::vector<PartitionConfig> cluster_partitions(const ClusterConfig& config) {
  std::vector<PartitionConfig> out = config.partitions;
  if (out.empty()) out.push_back({.name = "main", .nodes = "", .is_default = true});
  bool any_default = false;
  for (const PartitionConfig& p : out) any_default = any_default || p.is_default;
  if (!any_default) out.front().is_default = true;
  return out;
}

Result<std::string> find_cluster_config(std::string_view flag) {
  if (!flag.empty()) return std::string(flag);
  if (const char* env = std::getenv("TRELLIS_CONF"); env && *env) return std::string(env);
  return fail(Error::Code::kNotFound,
              "no cluster config: pass --conf FILE or set TRELLIS_CONF (trellis cluster up writes "
              "DIR/trellis.toml)");
}

}  // namespace trellis
