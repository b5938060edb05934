#include "sim/outputs.h"

#include <fstream>

#include "core/hostlist.h"
#include "core/number_text.h"

namespace trellis {

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<std::string> parse_csv_line(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

void write_jobs_csv(std::ostream& out, const SimResult& result, Seconds bsld_threshold) {
  out << "id,user,submit,start,end,wait,response,run_time,requested_time,requested_nodes,nodes,"
         "bounded_slowdown,state,reason,average_hops,leaf_switches,box_shape,box_origin,"
         "inflation,hop_bytes,max_link_load,hostlist\n";
  auto user = [](int id) { return id >= 0 ? std::to_string(id) : std::string(); };
  for (const JobRecord& j : result.jobs) {
    NodeSet nodes(result.machine_nodes);
    for (auto [first, last] : j.runs) nodes.set_range(first, last + 1);
    out << j.id << ',' << user(j.user) << ',' << exact_number(j.submit) << ','
        << exact_number(j.start) << ',' << exact_number(j.end) << ',' << exact_number(j.wait())
        << ',' << exact_number(j.response()) << ',' << exact_number(j.run_time) << ','
        << exact_number(j.time_limit) << ',' << j.requested_nodes << ',' << j.nodes << ','
        << exact_number(j.bounded_slowdown(bsld_threshold)) << ',' << (j.timed_out ? "TO" : "CD")
        << ',' << (j.timed_out ? "killed at its time limit" : "") << ',';
    if (!j.runs.empty()) out << exact_number(j.average_hops);
    out << ',';
    if (j.leaf_switches) out << *j.leaf_switches;
    out << ',';
    if (const Box* box = j.box()) {
      out << format_shape(box->extents) << ',';
      for (size_t a = 0; a < box->extents.size(); ++a) out << (a ? " " : "") << box->anchor[a];
    } else {
      out << ',';
    }
    out << ',';
    if (const NetworkCost* network = j.network())
      out << exact_number(network->inflation) << ',' << exact_number(network->hop_bytes) << ','
          << exact_number(network->max_link_load);
    else
      out << ",,";
    out << ',' << (j.runs.empty() ? "" : csv_field(format_hostlist(nodes))) << '\n';
  }
  for (const RejectedJob& r : result.rejected) {
    out << r.id << ',' << user(r.user) << ',' << exact_number(r.submit) << ",,,,,"
        << exact_number(r.run_time) << ',' << exact_number(r.time_limit) << ',' << r.requested_nodes
        << ",,,RJ," << csv_field(r.reason) << ",,,,,,,,\n";
  }
}

nlohmann::json summary_document(const nlohmann::json& about, const RunSummary& summary,
                                const SimResult& result) {
  nlohmann::json doc = about;
  doc["metrics"] = to_json(summary);
  doc["users"] = users_to_json(summary);
  nlohmann::json rejected = nlohmann::json::array();
  for (const RejectedJob& r : result.rejected)
    rejected.push_back({{"id", r.id}, {"reason", r.reason}, {"nodes", r.requested_nodes}});
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
