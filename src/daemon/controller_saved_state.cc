#include "daemon/controller_saved_state.h"

namespace trellis {

std::string reservations_to_text(const std::vector<Reservation>& reservations) {
  nlohmann::json out = nlohmann::json::array();
  for (const Reservation& r : reservations) {
    std::vector<NodeId> nodes;
    r.nodes.for_each([&](NodeId n) { nodes.push_back(n); });
    out.push_back({{"job", r.job}, {"start", r.start}, {"nodes", nodes}});
  }
  return out.dump();
}

std::vector<Reservation> reservations_from_json(const nlohmann::json& parsed, int node_count,
                                                const std::map<JobId, StoredJob>& pending) {
  std::vector<Reservation> out;
  if (!parsed.is_array()) return out;
  for (const nlohmann::json& item : parsed) {
    if (!item.is_object() || !item["job"].is_number_integer() || !item["start"].is_number() ||
        !item["nodes"].is_array())
      continue;
    Reservation r;
    r.job = item["job"].get<JobId>();
    r.start = item["start"].get<double>();
    r.nodes = NodeSet(node_count);
    bool valid = pending.count(r.job) > 0;
    for (const nlohmann::json& n : item["nodes"]) {
      if (!n.is_number_integer() || n.get<long>() < 0 || n.get<long>() >= node_count) {
        valid = false;
        break;
      }
      r.nodes.set(static_cast<NodeId>(n.get<long>()));
    }
    if (valid) out.push_back(std::move(r));
  }
  return out;
}

SavedBatchState batch_state_from_text(const std::string& text, int node_count,
                                      const std::map<JobId, StoredJob>& pending) {
  SavedBatchState saved;
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    saved.reservations = reservations_from_json(parsed, node_count, pending);
    return saved;
  }
  if (parsed.contains("reservations"))
    saved.reservations = reservations_from_json(parsed["reservations"], node_count, pending);
  if (!parsed.contains("frozen") || !parsed["frozen"].is_array()) return saved;
  for (const nlohmann::json& item : parsed["frozen"]) {
    if (!item.is_object() || !item["job"].is_number_integer() ||
        !item["attempt"].is_number_integer() || !item["frozen"].is_boolean() ||
        !item["since"].is_number() || !item["before"].is_number())
      continue;
    SavedFreeze f;
    f.attempt = item["attempt"].get<int>();
    f.frozen = item["frozen"].get<bool>();
    f.frozen_since = item["since"].get<double>();
    f.frozen_before = std::max(0.0, item["before"].get<double>());
    saved.frozen[item["job"].get<JobId>()] = f;
  }
  return saved;
}

}  // namespace trellis
