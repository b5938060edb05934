#include "shell/shell_options.h"

#include <charconv>
#include <cmath>
#include <map>

#include "core/hostlist_names.h"

namespace trellis {
namespace {

// The longest step one shell is told about (names and counts on its command line).
constexpr size_t kMaxStepNodes = 1 << 20;

template <typename T>
bool parse_number(std::string_view text, T& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string_view mpi_kind_name(MpiKind kind) {
  switch (kind) {
    case MpiKind::kNone:
      return "none";
    case MpiKind::kPmi1:
      return "pmi1";
    case MpiKind::kPmix:
      return "pmix";
    case MpiKind::kAuto:
      return "auto";
  }
  return "pmi1";
}

Result<MpiKind> parse_mpi_kind(std::string_view text) {
  if (text == "none") return MpiKind::kNone;
  if (text == "pmi1" || text == "pmi" || text == "pmi2") return MpiKind::kPmi1;
  if (text == "pmix" || text == "pmix_v4" || text == "pmix_v3") return MpiKind::kPmix;
  if (text == "auto") return MpiKind::kAuto;
  return fail("mpi: '" + std::string(text) + "'; expected auto, none, pmi1 or pmix");
}

std::string step_name(int64_t job, int step) {
  return std::to_string(job) + "." + (step == kBatchStep ? "batch" : std::to_string(step));
}

std::vector<std::string> ShellOptions::to_arguments() const {
  std::string nodelist = compress_hostlist_names(nodes);
  Result<TaskLayout> layout = TaskLayout::from_counts(tasks_per_node, distribution);
  std::string counts = layout ? layout->slurm_tasks_per_node() : "";
  std::vector<std::string> out = {"--job",
                                  std::to_string(job),
                                  "--attempt",
                                  std::to_string(attempt),
                                  "--step",
                                  std::to_string(step),
                                  "--node",
                                  node,
                                  "--node-index",
                                  std::to_string(node_index),
                                  "--nodes",
                                  nodelist,
                                  "--tasks-per-node",
                                  counts,
                                  "--distribution",
                                  std::string(distribution_name(distribution)),
                                  "--mpi",
                                  std::string(mpi_kind_name(mpi)),
                                  "--kill-grace",
                                  std::to_string(kill_grace)};
  if (!agent.empty()) {
    out.push_back("--agent");
    out.push_back(agent);
  }
  if (label) out.push_back("--label");
  out.push_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

Result<ShellOptions> parse_shell_options(const std::vector<std::string>& arguments) {
  ShellOptions o;
  std::map<std::string, std::string> values;
  bool have_command = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& a = arguments[i];
    if (a == "--") {
      o.argv.assign(arguments.begin() + static_cast<long>(i) + 1, arguments.end());
      have_command = true;
      break;
    }
    if (a == "--label") {
      o.label = true;
      continue;
    }
    static const char* const kValued[] = {
        "--job", "--attempt",        "--step",         "--node",  "--node-index", "--nodes",
        "--mpi", "--tasks-per-node", "--distribution", "--agent", "--kill-grace"};
    bool known = false;
    for (const char* name : kValued) known |= a == name;
    if (!known) return fail("trellis-shell: unknown argument '" + a + "'");
    if (i + 1 >= arguments.size()) return fail("trellis-shell: " + a + " needs a value");
    values[a] = arguments[++i];
  }
  if (!have_command || o.argv.empty() || o.argv[0].empty())
    return fail("trellis-shell: no command after '--'");
  for (const char* required :
       {"--job", "--attempt", "--step", "--node", "--node-index", "--nodes", "--tasks-per-node"})
    if (!values.contains(required))
      return fail("trellis-shell: " + std::string(required) + " is missing");
  if (!parse_number(values["--job"], o.job) || o.job <= 0)
    return fail("trellis-shell: --job '" + values["--job"] + "' is not a job id");
  if (!parse_number(values["--attempt"], o.attempt) || o.attempt <= 0)
    return fail("trellis-shell: --attempt '" + values["--attempt"] + "' is not an attempt");
  if (!parse_number(values["--step"], o.step) || (o.step < 0 && o.step != kBatchStep))
    return fail("trellis-shell: --step '" + values["--step"] + "' is not a step id");
  o.node = values["--node"];
  if (o.node.empty()) return fail("trellis-shell: --node is empty");
  Result<std::vector<std::string>> nodes = expand_hostlist_names(values["--nodes"], kMaxStepNodes);
  if (!nodes) return fail("trellis-shell: --nodes: " + nodes.error().message);
  o.nodes = std::move(*nodes);
  if (!parse_number(values["--node-index"], o.node_index) || o.node_index < 0 ||
      static_cast<size_t>(o.node_index) >= o.nodes.size())
    return fail("trellis-shell: --node-index '" + values["--node-index"] + "' is not one of the " +
                std::to_string(o.nodes.size()) + " nodes");
  if (o.nodes[static_cast<size_t>(o.node_index)] != o.node)
    return fail("trellis-shell: node " + std::to_string(o.node_index) + " of --nodes is " +
                o.nodes[static_cast<size_t>(o.node_index)] + ", not --node " + o.node);
  Result<std::vector<int>> counts = parse_slurm_tasks_per_node(values["--tasks-per-node"]);
  if (!counts) return fail("trellis-shell: --tasks-per-node: " + counts.error().message);
  if (counts->size() != o.nodes.size())
    return fail("trellis-shell: --tasks-per-node gives " + std::to_string(counts->size()) +
                " counts for " + std::to_string(o.nodes.size()) + " nodes");
  o.tasks_per_node = std::move(*counts);
  if (values.contains("--distribution")) {
    Result<Distribution> d = parse_distribution(values["--distribution"]);
    if (!d) return fail("trellis-shell: --" + d.error().message);
    o.distribution = *d;
  }
  if (Result<TaskLayout> layout = TaskLayout::from_counts(o.tasks_per_node, o.distribution);
      !layout)
    return fail("trellis-shell: " + layout.error().message);
  if (values.contains("--mpi")) {
    Result<MpiKind> kind = parse_mpi_kind(values["--mpi"]);
    if (!kind) return fail("trellis-shell: --" + kind.error().message);
    if (*kind == MpiKind::kAuto)
      return fail("trellis-shell: --mpi auto: the agent chooses before the shell starts");
    o.mpi = *kind;
  }
  if (values.contains("--kill-grace")) {
    if (!parse_number(values["--kill-grace"], o.kill_grace) || !std::isfinite(o.kill_grace) ||
        o.kill_grace < 0 || o.kill_grace > 86400)
      return fail("trellis-shell: --kill-grace '" + values["--kill-grace"] +
                  "' is not 0..86400 seconds");
  }
  o.agent = values["--agent"];
  return o;
}

}  // namespace trellis
