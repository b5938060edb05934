#include "sim/workload.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sched/request_shaping.h"
#include "sim/swf.h"

namespace trellis {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Result<double> number_field(const nlohmann::json& job, const char* key, const std::string& where,
                            std::optional<double> fallback) {
  auto it = job.find(key);
  if (it == job.end()) {
    if (fallback) return *fallback;
    return fail(where + ": missing \"" + key + "\"");
  }
  if (!it->is_number() || it->get<double>() < 0)
    return fail(where + ": \"" + key + "\" must be a number >= 0, found " + it->dump());
  return it->get<double>();
}

}  // namespace

void sort_by_submit(std::vector<Job>& jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.id < b.id;
  });
}

Result<Workload> parse_job_list_json(const std::string& text, const std::string& source) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return fail(source + ": not valid JSON");
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array())
    return fail(source + ": expected an object with a \"jobs\" array");
  Workload w;
  w.source = source;
  const auto& list = doc["jobs"];
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = source + ": jobs[" + std::to_string(i) + "]";
    const auto& j = list[i];
    if (!j.is_object()) return fail(where + ": expected an object");
    Job job;
    if (j.contains("id")) {
      if (!j["id"].is_number_integer()) return fail(where + ": \"id\" must be a whole number");
      job.id = j["id"].get<JobId>();
    } else {
      job.id = static_cast<JobId>(i + 1);
    }
    auto submit = number_field(j, "submit", where, 0.0);
    if (!submit) return submit.error();
    auto run = number_field(j, "run", where, std::nullopt);
    if (!run) return run.error();
    auto limit = number_field(j, "limit", where, *run);
    if (!limit) return limit.error();
    job.submit = *submit;
    job.run_time = *run;
    job.time_limit = *limit;
    PlacementMode mode = PlacementMode::kTorus;
    if (j.contains("mode")) {
      auto m = j["mode"].is_string() ? parse_placement_mode(j["mode"].get<std::string>())
                                     : Result<PlacementMode>(fail("not a string"));
      if (!m) return fail(where + ": \"mode\": " + m.error().message);
      mode = *m;
    }
    bool rotate = !j.contains("rotate") || j["rotate"] == true;
    if (j.contains("shape")) {
      auto shape = j["shape"].is_string() ? parse_shape(j["shape"].get<std::string>())
                                          : Result<Shape>(fail("not a string"));
      if (!shape) return fail(where + ": \"shape\": " + shape.error().message);
      job.request = Request::box(*shape, rotate, mode);
    } else if (j.contains("nodes")) {
      if (!j["nodes"].is_number_integer() || j["nodes"].get<long>() < 1)
        return fail(where + ": \"nodes\" must be a whole number >= 1, found " + j["nodes"].dump());
      job.request = Request::count(j["nodes"].get<int>(), mode);
    } else {
      return fail(where + ": give \"nodes\" or \"shape\"");
    }
    if (j.contains("user") && j["user"].is_number_integer()) job.user = j["user"].get<int>();
    if (j.contains("name") && j["name"].is_string()) job.name = j["name"].get<std::string>();
    w.jobs.push_back(std::move(job));
  }
  sort_by_submit(w.jobs);
  return w;
}

Result<Workload> load_workload(const std::string& path, int procs_per_node) {
  if (procs_per_node < 1) return fail("--procs-per-node must be at least 1");
  if (ends_with(path, ".json")) {
    std::ifstream in(path);
    if (!in) return fail(path + ": cannot open the job list");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_job_list_json(text.str(), path);
  }
  if (!ends_with(path, ".swf"))
    return fail(path + ": unknown workload format (expected a .swf trace or a .json job list)");
  auto trace = read_swf_file(path);
  if (!trace) return trace.error();
  SwfJobs converted = swf_to_jobs(*trace, procs_per_node);
  Workload w{std::move(converted.jobs), converted.skipped, path};
  sort_by_submit(w.jobs);
  return w;
}

void scale_load(Workload& workload, double factor) {
  if (workload.jobs.empty()) return;
  double first = workload.jobs.front().submit;
  for (Job& job : workload.jobs) job.submit = first + (job.submit - first) / factor;
}

void set_request_form(Workload& workload, const Machine& machine, PlacementMode mode, bool shaped) {
  for (Job& job : workload.jobs) {
    job.request.mode = mode;
    if (shaped && machine.torus() && mode != PlacementMode::kNonContiguous)
      job.request = shape_request(*machine.torus(), job.request);
  }
}

}  // namespace trellis
