// sinfo: partitions and the states of their nodes, in Slurm's default layout or an -o format;
// -N one row per node, -s a summary per partition.
#include <getopt.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "cli/live_client.h"
#include "cli/slurm/slurm_command.h"
#include "cli/slurm/slurm_format.h"
#include "cli/slurm/slurm_help.h"
#include "core/hostlist.h"
#include "daemon/node_types.h"
#include "topology/machine.h"

namespace trellis::cli::slurm {
namespace {

constexpr const char* kDefaultFormat = "%#P %.5a %.10l %.6D %.6t %N";
constexpr const char* kNodeFormat = "%#N %.6D %#P %6t";
constexpr const char* kSummaryFormat = "%#P %.5a %.10l %.16F %N";
constexpr const char* kLongFormat = "%#P %.5a %.10l %.6D %.11T %N";
constexpr const char* kCodes = "PRalDtTNFAcCEnmGfz";

enum { kIgnoredFlag = 256, kUnsupported };

const std::vector<LongOption> kOptions = {
    {"noheader", no_argument, 'h', nullptr, "no headers on output"},
    {"format", required_argument, 'o', "format",
     "format specification (%P %a %l %D %t %N %E %c %C %m %G %f %z ...; sinfo's codes)"},
    {"partition", required_argument, 'p', "partition", "report on specific partition"},
    {"Node", no_argument, 'N', nullptr, "Node-centric format"},
    {"summarize", no_argument, 's', nullptr, "report state summary only"},
    {"long", no_argument, 'l', nullptr, "long output - displays more information"},
    {"responding", no_argument, 'r', nullptr, "report only responding nodes"},
    {"dead", no_argument, 'd', nullptr, "show only non-responding nodes"},
    {"exact", no_argument, 'e', nullptr, "group nodes only on exact match of configuration"},
    {"all", no_argument, 'a', nullptr, "show all partitions"},
    {"verbose", no_argument, 'v', nullptr, "verbosity level"},
    {"states", required_argument, 't', "node_state", "specify what states of nodes to view"},
    {"iterate", required_argument, 'i'},
    {"nodes", required_argument, 'n'},
    {"clusters", required_argument, 'M'},
    {"list-reasons", no_argument, 'R'},
    {"Format", required_argument, 'O'},
    {"json", optional_argument, kUnsupported},
    {"yaml", optional_argument, kUnsupported},
    {"noconvert", no_argument, kIgnoredFlag},
    {"local", no_argument, kIgnoredFlag},
    {"federation", no_argument, kIgnoredFlag},
};

std::string compact_state(v1::NodeState s) {
  switch (s) {
    case v1::IDLE:
      return "idle";
    case v1::ALLOCATED:
      return "alloc";
    case v1::MIXED:
      return "mix";
    case v1::DOWN:
      return "down";
    case v1::DRAINED:
      return "drain";
    case v1::DRAINING:
      return "drng";
    default:
      return "unk";
  }
}
std::string long_state(v1::NodeState s) {
  switch (s) {
    case v1::IDLE:
      return "idle";
    case v1::ALLOCATED:
      return "allocated";
    case v1::MIXED:
      return "mixed";
    case v1::DOWN:
      return "down";
    case v1::DRAINED:
      return "drained";
    case v1::DRAINING:
      return "draining";
    default:
      return "unknown";
  }
}

struct Row {
  const PartitionConfig* partition = nullptr;
  std::vector<const v1::NodeInfo*> nodes;
};

std::string header_of(char code) {
  switch (code) {
    case 'P':
    case 'R':
      return "PARTITION";
    case 'a':
      return "AVAIL";
    case 'l':
      return "TIMELIMIT";
    case 'D':
      return "NODES";
    case 't':
    case 'T':
      return "STATE";
    case 'N':
      return "NODELIST";
    case 'F':
      return "NODES(A/I/O/T)";
    case 'A':
      return "NODES(A/I)";
    case 'c':
      return "CPUS";
    case 'C':
      return "CPUS(A/I/O/T)";
    case 'E':
      return "REASON";
    case 'n':
      return "HOSTNAMES";
    case 'm':
      return "MEMORY";
    case 'e':
      return "FREE_MEM";
    case 'G':
      return "GRES";
    case 'f':
      return "AVAIL_FEATURES";
    case 'z':
      return "S:C:T";
  }
  return "";
}

// A node's CPUs (hardware threads), as sinfo counts them; a featureless node has one.
int cpus_of(const NodeInventory* node) {
  return node ? node->cpus() : 1;
}

// The smallest of the rows' values, with a '+' when they differ (as sinfo's "4+").
std::string least_of(const std::vector<int64_t>& values) {
  if (values.empty()) return "0";
  auto [low, high] = std::minmax_element(values.begin(), values.end());
  return std::to_string(*low) + (*high != *low ? "+" : "");
}

}  // namespace

int sinfo_main(const std::vector<std::string>& args) {
  static const CommandHelp help{"sinfo", "[OPTIONS]", kOptions, {.h_is_help = false}};
  if (std::optional<int> status = answer_help(args, help)) return *status;
  Result<ParsedArgs> parsed = parse_options(args, "ho:p:Nslrdeavt:i:n:M:RO:", kOptions);
  if (!parsed) return report_error("sinfo", parsed.error());
  bool header = true, per_node = false, summary = false, responding = false, dead = false;
  std::string format;
  std::set<std::string> only;
  std::set<std::string> states;
  for (const Parsed& o : parsed->options) {
    switch (o.id) {
      case 'h':
        header = false;
        break;
      case 'o':
        format = o.value;
        break;
      case 'p':
        for (const std::string& p : split_list(o.value)) only.insert(p);
        break;
      case 'N':
        per_node = true;
        break;
      case 's':
        summary = true;
        break;
      case 'l':
        if (format.empty()) format = kLongFormat;
        break;
      case 'r':
        responding = true;
        break;
      case 'd':
        dead = true;
        break;
      case 't':
        for (const std::string& s : split_list(o.value)) states.insert(s);
        break;
      case 'e':
      case 'a':
      case 'v':
      case kIgnoredFlag:
        break;
      default:
        return report_error("sinfo", fail("option '" + o.word +
                                          "' is not supported by Trellis (README: \"Coming "
                                          "from Slurm\")"));
    }
  }
  if (format.empty()) format = per_node ? kNodeFormat : summary ? kSummaryFormat : kDefaultFormat;
  // '#' sizes a field to its longest value, as sinfo does: parsed with it removed, the fields so
  // marked are noted by their place among the fields.
  std::set<size_t> sized;
  std::string plain;
  size_t fields_seen = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    plain += format[i];
    if (format[i] != '%') continue;
    if (i + 1 < format.size() && format[i + 1] == '%') {
      plain += format[++i];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '#') {
      sized.insert(fields_seen);
      ++i;
    }
    ++fields_seen;
  }
  Result<std::vector<FormatItem>> items = parse_format(plain, kCodes, "sinfo");
  if (!items) return report_error("sinfo", items.error());
  // As sinfo: nodes that show the same values are one row, so rows differ by state only when a
  // state (or a reason) is shown.
  const bool split_by_state = std::any_of(items->begin(), items->end(), [](const FormatItem& i) {
    return i.code == 't' || i.code == 'T' || i.code == 'E';
  });
  // ... and by node type when what a node has is shown.
  const bool split_by_type = std::any_of(items->begin(), items->end(), [](const FormatItem& i) {
    return i.code == 'c' || i.code == 'm' || i.code == 'G' || i.code == 'f' || i.code == 'z';
  });

  Result<LiveClient> client = connect_to_cluster("");
  if (!client) return report_error("sinfo", client.error());
  Result<v1::ListNodesReply> listed = list_nodes(*client, {});
  if (!listed) return report_error("sinfo", listed.error());
  Result<Machine> machine = Machine::parse(listed->machine());
  const int total = machine ? machine->node_count() : listed->nodes_size();
  std::vector<PartitionConfig> partitions = cluster_partitions(client->config);
  Result<NodeTypes> types = NodeTypes::build(client->config.node_types, total);
  if (!types) return report_error("sinfo", types.error());
  std::vector<Row> rows;
  for (const PartitionConfig& p : partitions) {
    if (!only.empty() && !only.count(p.name)) continue;
    Result<NodeSet> members = p.nodes.empty() ? Result<NodeSet>(NodeSet::all(total))
                                              : parse_hostlist(p.nodes, total, "n");
    if (!members) return report_error("sinfo", members.error());
    std::map<std::string, Row> by_state;
    std::vector<Row> per;
    for (const v1::NodeInfo& node : listed->nodes()) {
      if (node.index() < 0 || node.index() >= total || !members->test(node.index())) continue;
      bool down = node.state() == v1::DOWN;
      if ((responding && down) || (dead && !down)) continue;
      if (!states.empty() && !states.count(compact_state(node.state())) &&
          !states.count(long_state(node.state())))
        continue;
      if (per_node) {
        per.push_back({&p, {&node}});
      } else {
        std::string key = summary || !split_by_state ? "" : compact_state(node.state());
        if (split_by_type) key += "|" + std::string(types->type_name(node.index()));
        Row& row = by_state[key];
        row.partition = &p;
        row.nodes.push_back(&node);
      }
    }
    for (auto& [state, row] : by_state) rows.push_back(std::move(row));
    for (Row& row : per) rows.push_back(std::move(row));
  }
  auto value_of = [&](char code, const Row& row) -> std::string {
    const PartitionConfig& p = *row.partition;
    std::vector<NodeId> ids;
    int alloc = 0, idle = 0, other = 0;
    int64_t alloc_cpus = 0, idle_cpus = 0, other_cpus = 0;
    std::vector<int64_t> cpus, memory, free_memory;
    for (const v1::NodeInfo* n : row.nodes) {
      ids.push_back(n->index());
      const NodeInventory* inventory = types->of(n->index());
      const int c = cpus_of(inventory);
      cpus.push_back(c);
      memory.push_back(inventory ? inventory->memory_mb : 1);
      // The memory no job holds (Slurm's FREE_MEM is the host's; here it is what is left to give).
      free_memory.push_back(n->alloc_known()    ? memory.back() - n->alloc_memory_mb()
                            : n->job_ids_size() ? 0
                                                : memory.back());
      // A node in use has the CPUs its jobs hold allocated (all of them on whole nodes); those
      // left of a mixed node are idle. A mixed node counts as allocated, as in Slurm.
      if (n->state() == v1::ALLOCATED || n->state() == v1::DRAINING || n->state() == v1::MIXED) {
        ++alloc;
        const int64_t held = n->alloc_known() ? n->alloc_cpus() : c;
        alloc_cpus += held;
        if (n->state() != v1::DRAINING)
          idle_cpus += c - held;
        else
          other_cpus += c - held;
      } else if (n->state() == v1::IDLE) {
        ++idle;
        idle_cpus += c;
      } else {
        ++other;
        other_cpus += c;
      }
    }
    const NodeInventory* first =
        row.nodes.empty() ? nullptr : types->of(row.nodes.front()->index());
    std::string nodelist = format_hostlist(NodeSet::of(total, ids), "n");
    switch (code) {
      case 'P':
        return p.name + (p.is_default ? "*" : "");
      case 'R':
        return p.name;
      case 'a':
        return "up";
      case 'l':
        return p.max_time > 0 ? squeue_time(p.max_time) : std::string("infinite");
      case 'D':
        return std::to_string(row.nodes.size());
      case 't':
        return row.nodes.empty() ? "n/a" : compact_state(row.nodes.front()->state());
      case 'T':
        return row.nodes.empty() ? "n/a" : long_state(row.nodes.front()->state());
      case 'N':
      case 'n':
        return nodelist;
      case 'F':
        return std::to_string(alloc) + "/" + std::to_string(idle) + "/" + std::to_string(other) +
               "/" + std::to_string(row.nodes.size());
      case 'A':
        return std::to_string(alloc) + "/" + std::to_string(idle);
      case 'c':
        return least_of(cpus);
      case 'C':
        return std::to_string(alloc_cpus) + "/" + std::to_string(idle_cpus) + "/" +
               std::to_string(other_cpus) + "/" +
               std::to_string(alloc_cpus + idle_cpus + other_cpus);
      case 'm':
        return least_of(memory);
      case 'e': {
        if (free_memory.empty()) return "N/A";
        auto [low, high] = std::minmax_element(free_memory.begin(), free_memory.end());
        return std::to_string(*low) + (*high != *low ? "-" + std::to_string(*high) : "");
      }
      case 'G':
        return first ? gres_text(*first) : "(null)";
      case 'f': {
        std::string features;
        if (first)
          for (const std::string& f : first->features)
            features += (features.empty() ? "" : ",") + f;
        return features.empty() ? "(null)" : features;
      }
      case 'z':
        return first ? std::to_string(first->sockets) + ":" +
                           std::to_string(first->cores_per_socket) + ":" +
                           std::to_string(first->threads_per_core)
                     : "1:1:1";
      case 'E': {
        std::string reason = row.nodes.empty() ? "" : row.nodes.front()->reason();
        return reason.empty() ? "none" : reason;
      }
    }
    return "";
  };
  // Widths of '#' fields: the longest of the header and the values.
  std::vector<FormatItem> laid = *items;
  size_t field = 0;
  for (FormatItem& item : laid) {
    if (!item.code) continue;
    if (sized.count(field++)) {
      size_t width = header_of(item.code).size();
      for (const Row& row : rows) width = std::max(width, value_of(item.code, row).size());
      item.width = static_cast<int>(width);
    }
  }
  std::string out;
  if (header) {
    for (const FormatItem& item : laid)
      out += item.code ? fit(header_of(item.code), item.width, item.right) : item.text;
    out += "\n";
  }
  for (const Row& row : rows) {
    for (const FormatItem& item : laid)
      out += item.code ? fit(value_of(item.code, row), item.width, item.right) : item.text;
    out += "\n";
  }
  std::cout << out << std::flush;
  return 0;
}

}  // namespace trellis::cli::slurm
