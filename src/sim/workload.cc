#include "sim/workload.h"

#include "sched/demand.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "sched/request_shaping.h"
#include "sim/swf.h"

namespace trellis {

namespace {

bool ends_with_ignoring_case(const std::string& s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i])
      return false;
  return true;
}

constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
constexpr std::array<std::string_view, 13> kJobKeys = {"id",    "submit", "run",  "limit", "nodes",
                                                       "shape", "rotate", "mode", "user",  "name",
                                                       "cores", "mem",    "gpus"};

// A time in seconds: a number in [0, kMaxSimulatedSeconds].
Result<double> seconds_field(const nlohmann::json& job, const char* key, const std::string& where,
                             std::optional<double> fallback) {
  auto it = job.find(key);
  if (it == job.end()) {
    if (fallback) return *fallback;
    return fail(where + ": missing \"" + key + "\"");
  }
  if (!it->is_number() || !(it->get<double>() >= 0) || it->get<double>() > kMaxSimulatedSeconds)
    return fail(where + ": \"" + key + "\" must be a number of seconds from 0 to 1e12, found " +
                it->dump());
  return it->get<double>();
}

// A whole number in [low, high].
Result<long long> whole_field(const nlohmann::json& value, const char* key,
                              const std::string& where, double low, double high) {
  bool whole = value.is_number_integer() ||
               (value.is_number_float() && value.get<double>() == std::floor(value.get<double>()));
  double x = value.is_number() ? value.get<double>() : 0;
  if (!whole || x < low || x > high) {
    std::ostringstream range;
    range << std::fixed << std::setprecision(0) << low << " to " << high;
    return fail(where + ": \"" + key + "\" must be a whole number from " + range.str() +
                ", found " + value.dump());
  }
  return static_cast<long long>(x);
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
  std::unordered_map<JobId, size_t> index_of_id;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = source + ": jobs[" + std::to_string(i) + "]";
    const auto& j = list[i];
    if (!j.is_object()) return fail(where + ": expected an object");
    for (const auto& item : j.items())
      if (std::find(kJobKeys.begin(), kJobKeys.end(), item.key()) == kJobKeys.end())
        return fail(
            where + ": unknown key \"" + item.key() +
            "\" (known: id, submit, run, limit, nodes, shape, rotate, mode, user, name, cores, "
            "mem, gpus)");
    Job job;
    if (j.contains("id")) {
      auto id = whole_field(j["id"], "id", where, 0, kMaxExactInteger);
      if (!id) return id.error();
      job.id = *id;
    } else {
      job.id = static_cast<JobId>(i + 1);
    }
    if (auto [it, fresh] = index_of_id.emplace(job.id, i); !fresh)
      return fail(where + ": id " + std::to_string(job.id) + " is already used by jobs[" +
                  std::to_string(it->second) + "]");
    auto submit = seconds_field(j, "submit", where, 0.0);
    if (!submit) return submit.error();
    auto run = seconds_field(j, "run", where, std::nullopt);
    if (!run) return run.error();
    auto limit = seconds_field(j, "limit", where, *run);
    if (!limit) return limit.error();
    if (!j.contains("limit")) ++w.perfect_estimates;
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
    if (j.contains("rotate") && !j["rotate"].is_boolean())
      return fail(where + ": \"rotate\" must be true or false, found " + j["rotate"].dump());
    bool rotate = !j.contains("rotate") || j["rotate"] == true;
    if (j.contains("shape") && j.contains("nodes"))
      return fail(where + ": give \"nodes\" or \"shape\", not both");
    if (j.contains("shape")) {
      auto shape = j["shape"].is_string() ? parse_shape(j["shape"].get<std::string>())
                                          : Result<Shape>(fail("not a string"));
      if (!shape) return fail(where + ": \"shape\": " + shape.error().message);
      job.request = Request::box(*shape, rotate, mode);
    } else if (j.contains("nodes")) {
      auto nodes = whole_field(j["nodes"], "nodes", where, 1, 2147483647.0);
      if (!nodes) return nodes.error();
      job.request = Request::count(static_cast<int>(*nodes), mode);
    } else {
      return fail(where + ": give \"nodes\" or \"shape\"");
    }
    if (j.contains("user")) {
      auto user = whole_field(j["user"], "user", where, 0, 2147483647.0);
      if (!user) return user.error();
      job.user = static_cast<int>(*user);
    }
    if (j.contains("name")) {
      if (!j["name"].is_string())
        return fail(where + ": \"name\" must be text, found " + j["name"].dump());
      job.name = j["name"].get<std::string>();
    }
    // What each node gives it, on nodes with an inventory (set_node_resources).
    if (j.contains("cores")) {
      auto cores = whole_field(j["cores"], "cores", where, 1, 1 << 20);
      if (!cores) return cores.error();
      job.resources.cpus_per_task = static_cast<int>(*cores);
    }
    if (j.contains("mem")) {
      auto mem = whole_field(j["mem"], "mem", where, 0, 1099511627776.0);
      if (!mem) return mem.error();
      job.resources.mem_per_node_mb = static_cast<int64_t>(*mem);
    }
    if (j.contains("gpus")) {
      auto gpus = whole_field(j["gpus"], "gpus", where, 1, 64);
      if (!gpus) return gpus.error();
      job.resources.gpus_per_node = static_cast<int>(*gpus);
    }
    w.jobs.push_back(std::move(job));
  }
  sort_by_submit(w.jobs);
  return w;
}

Result<Workload> load_workload(const std::string& path, int procs_per_node) {
  if (procs_per_node < 1) return fail("--procs-per-node must be at least 1");
  std::string plain = ends_with_ignoring_case(path, ".gz") ? path.substr(0, path.size() - 3) : path;
  bool json = ends_with_ignoring_case(plain, ".json");
  if (!json && !ends_with_ignoring_case(plain, ".swf"))
    return fail(path +
                ": unknown workload format (expected an SWF trace .swf or .swf.gz, or a JSON job "
                "list .json)");
  auto text = read_text_file(path);
  if (!text) return text.error();
  Workload w;
  if (json) {
    auto parsed = parse_job_list_json(*text, path);
    if (!parsed) return parsed.error();
    w = std::move(*parsed);
    if (w.perfect_estimates > 0)
      w.notes.push_back(std::to_string(w.perfect_estimates) +
                        " jobs give no \"limit\": their run time is their estimate (a perfect "
                        "estimate, which flatters backfilling)");
  } else {
    auto trace = parse_swf(*text, path);
    if (!trace) return trace.error();
    SwfJobs converted = swf_to_jobs(*trace, procs_per_node);
    w.jobs = std::move(converted.jobs);
    w.skipped = converted.skipped;
    w.source = path;
    w.perfect_estimates = converted.estimated_from_run_time;
    w.swf_header = trace->header;
    for (size_t i = 0; i < trace->records.size(); ++i)
      w.swf_records.emplace(static_cast<JobId>(trace->records[i][SwfField::kJobNumber]),
                            trace->records[i]);
    auto header_number = [&](std::string_view key) -> std::optional<long long> {
      std::string value = trace->header_value(key);
      long long x = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size())
        return std::nullopt;
      return x;
    };
    w.unix_start_time = header_number("UnixStartTime");
    w.max_procs = header_number("MaxProcs");
    if (!w.max_procs) w.max_procs = header_number("MaxNodes");
    if (w.skipped > 0) {
      std::string lines;
      for (int line : converted.skipped_lines)
        lines += (lines.empty() ? "" : ", ") + std::to_string(line);
      w.notes.push_back(
          std::to_string(w.skipped) +
          " records skipped: no run time, no processor count or no submit time "
          "(line" +
          (converted.skipped_lines.size() > 1 ? "s " : " ") + lines +
          (w.skipped > static_cast<int>(converted.skipped_lines.size()) ? ", ..." : "") + ")");
    }
    if (w.perfect_estimates > 0)
      w.notes.push_back(std::to_string(w.perfect_estimates) +
                        " jobs have no requested time: their run time is their estimate (a "
                        "perfect estimate, which flatters backfilling)");
  }
  if (w.jobs.empty())
    return fail(path + ": no job to simulate" +
                (w.skipped > 0 ? " (all " + std::to_string(w.skipped) +
                                     " records lack a run time, a size or a submit time)"
                               : std::string(" (the file has no job records)")));
  sort_by_submit(w.jobs);
  return w;
}

void scale_load(Workload& workload, double factor) {
  if (workload.jobs.empty()) return;
  bool whole = std::all_of(workload.jobs.begin(), workload.jobs.end(),
                           [](const Job& j) { return j.submit == std::floor(j.submit); });
  double first = workload.jobs.front().submit;
  for (Job& job : workload.jobs) {
    job.submit = first + (job.submit - first) / factor;
    if (whole) job.submit = std::round(job.submit);
  }
  sort_by_submit(workload.jobs);
}

SwfTrace workload_to_swf(const Workload& workload, const Machine& machine, int procs_per_node) {
  SwfHeader header;
  bool has_version = false;
  for (const auto& [key, value] : workload.swf_header) {
    has_version |= key == "Version";
    header.emplace_back(key, value);
  }
  if (!has_version) header.insert(header.begin(), {"Version", "2.2"});
  if (workload.swf_header.empty()) {
    header.emplace_back("Computer", machine.spec());
    header.emplace_back("MaxNodes", std::to_string(machine.node_count()));
    header.emplace_back("MaxProcs", std::to_string(machine.node_count() * procs_per_node));
  }
  header.emplace_back("Note", "written by trellis sim from " + workload.source +
                                  " as simulated (after --load and --max-jobs)");
  SwfTrace fresh = jobs_to_swf(workload.jobs);
  SwfTrace trace;
  trace.header = std::move(header);
  for (size_t i = 0; i < workload.jobs.size(); ++i) {
    const Job& job = workload.jobs[i];
    auto it = workload.swf_records.find(job.id);
    SwfRecord record = it != workload.swf_records.end() ? it->second : fresh.records[i];
    record[SwfField::kSubmitTime] = job.submit;
    if (it == workload.swf_records.end() && procs_per_node > 1) {
      record[SwfField::kAllocatedProcessors] *= procs_per_node;
      record[SwfField::kRequestedProcessors] *= procs_per_node;
    }
    trace.records.push_back(record);
  }
  return trace;
}

void set_request_form(Workload& workload, const Machine& machine, PlacementMode mode, bool shaped,
                      bool pad_counts) {
  const Torus* torus = mode == PlacementMode::kNonContiguous ? nullptr : machine.torus();
  std::unordered_map<int, int> padded;  // count -> smallest box volume (traces repeat counts)
  for (Job& job : workload.jobs) {
    job.request.mode = mode;
    if (!torus) continue;
    if (pad_counts && !job.request.has_shape()) {
      auto [it, fresh] = padded.try_emplace(job.request.nodes, job.request.nodes);
      if (fresh) it->second = pad_to_box(*torus, job.request).nodes;
      job.request.padding += it->second - job.request.nodes;
      job.request.nodes = it->second;
    }
    if (shaped) job.request = shape_request(*torus, job.request);
  }
}

}  // namespace trellis

namespace trellis {

void set_node_resources(Workload& workload, const NodeInventory& node, bool share) {
  std::vector<Job> kept;
  kept.reserve(workload.jobs.size());
  int dropped = 0;
  std::string first_reason;
  for (Job& job : workload.jobs) {
    auto record = workload.swf_records.find(job.id);
    if (record != workload.swf_records.end() && job.resources.cpus_per_task == 0) {
      const SwfRecord& r = record->second;
      double procs = r[SwfField::kRequestedProcessors];
      if (procs <= 0) procs = r[SwfField::kAllocatedProcessors];
      const int nodes = std::max(1, job.request.nodes);
      job.resources.cpus_per_task =
          static_cast<int>((static_cast<long>(procs) + nodes - 1) / nodes);
      double kb_per_proc = r[SwfField::kRequestedMemory];
      if (kb_per_proc <= 0) kb_per_proc = r[SwfField::kUsedMemory];
      if (kb_per_proc > 0)
        job.resources.mem_per_node_mb = std::max<int64_t>(
            1, static_cast<int64_t>(kb_per_proc * job.resources.cpus_per_task / 1024.0 + 0.5));
    }
    Status ok = set_demand(job, {.node = node, .tasks_per_node = 1, .shared = share});
    if (!ok) {
      if (first_reason.empty())
        first_reason = "job " + std::to_string(job.id) + ": " + ok.error().message;
      ++dropped;
      continue;
    }
    kept.push_back(std::move(job));
  }
  workload.jobs = std::move(kept);
  workload.skipped += dropped;
  if (dropped > 0)
    workload.notes.push_back(std::to_string(dropped) +
                             " jobs ask more than a node has and were left out (the first, " +
                             first_reason + ")");
}

}  // namespace trellis
