#include "sim/outputs.h"

#include <fstream>

#include "core/hostlist.h"

namespace trellis {

void write_jobs_csv(std::ostream& out, const SimResult& result) {
  out << "id,submit,start,end,wait,response,bounded_slowdown,state,nodes,average_hops,"
         "leaf_switches,hostlist\n";
  for (const JobRecord& j : result.jobs) {
    NodeSet nodes(result.machine_nodes);
    for (auto [first, last] : j.runs) nodes.set_range(first, last + 1);
    out << j.id << ',' << j.submit << ',' << j.start << ',' << j.end << ',' << j.wait() << ','
        << j.response() << ',' << j.bounded_slowdown() << ',' << (j.timed_out ? "TO" : "CD") << ','
        << j.nodes << ',' << j.average_hops << ',';
    if (j.leaf_switches) out << *j.leaf_switches;
    out << ",\"" << format_hostlist(nodes) << "\"\n";
  }
}

nlohmann::json summary_document(const nlohmann::json& about, const RunSummary& summary,
                                const SimResult& result) {
  nlohmann::json doc = about;
  doc["metrics"] = to_json(summary);
  nlohmann::json rejected = nlohmann::json::array();
  for (const RejectedJob& r : result.rejected)
    rejected.push_back({{"id", r.id}, {"reason", r.reason}});
  doc["rejected_jobs"] = std::move(rejected);
  return doc;
}

Status write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return fail(path + ": cannot open for writing");
  out << text;
  if (!out) return fail(path + ": write failed");
  return Ok{};
}

}  // namespace trellis
