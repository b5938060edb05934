#include "sim/job_sets.h"

#include <algorithm>
#include <map>
#include <string>

#include "core/key_value.h"
#include "sim/outputs.h"

namespace trellis {

Result<std::vector<CompletedJob>> read_completed_jobs(std::istream& csv,
                                                      const std::set<long>& rejected) {
  std::string line;
  if (!std::getline(csv, line)) return fail("jobs.csv: empty, expected a header line");
  std::map<std::string, size_t> column;
  std::vector<std::string> header = parse_csv_line(line);
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const char* required : {"id", "submit", "start", "end", "state"})
    if (!column.count(required))
      return fail(std::string("jobs.csv: the header has no '") + required +
                  "' column (expected id,submit,start,end,...,state,...)");
  std::vector<CompletedJob> jobs;
  for (int number = 2; std::getline(csv, line); ++number) {
    if (line.empty()) continue;
    std::vector<std::string> fields = parse_csv_line(line);
    auto field = [&](const char* name) -> const std::string& {
      static const std::string kMissing;
      size_t at = column[name];
      return at < fields.size() ? fields[at] : kMissing;
    };
    const std::string& state = field("state");
    if (state != "CD" && state != "TO") continue;  // RJ: rejected, no times
    auto id = parse_whole_number(field("id"));
    if (!id) return fail("jobs.csv line " + std::to_string(number) + ": id " + id.error().message);
    if (rejected.count(*id)) continue;
    CompletedJob job{*id, 0, 0, 0};
    const std::pair<const char*, double*> times[] = {
        {"submit", &job.submit}, {"start", &job.start}, {"end", &job.end}};
    for (const auto& [name, out] : times) {
      auto value = parse_number(field(name));
      if (!value)
        return fail("jobs.csv line " + std::to_string(number) + ": " + name + " " +
                    value.error().message + " (expected seconds)");
      *out = *value;
    }
    jobs.push_back(job);
  }
  return jobs;
}

CommonJobs common_jobs(const std::vector<std::vector<CompletedJob>>& runs) {
  CommonJobs out;
  if (runs.empty()) return out;
  std::vector<std::set<long>> sets;
  for (const auto& run : runs) {
    std::set<long> ids;
    for (const CompletedJob& j : run) ids.insert(j.id);
    sets.push_back(std::move(ids));
  }
  out.ids = sets.front();
  for (const auto& ids : sets) {
    std::set<long> both;
    std::set_intersection(out.ids.begin(), out.ids.end(), ids.begin(), ids.end(),
                          std::inserter(both, both.end()));
    out.ids = std::move(both);
  }
  for (const auto& ids : sets) out.differ = out.differ || ids != sets.front();
  for (const auto& run : runs) {
    JobSetMetrics m;
    long counted = 0;
    for (const CompletedJob& j : run) {
      if (!out.ids.count(j.id)) continue;
      const double response = j.end - j.submit;
      const double run_time = j.end - j.start;
      m.mean_wait_s += j.start - j.submit;
      m.mean_response_s += response;
      m.mean_bounded_slowdown += std::max(1.0, response / std::max(run_time, 10.0));
      ++counted;
    }
    if (counted > 0) {
      m.mean_wait_s /= static_cast<double>(counted);
      m.mean_response_s /= static_cast<double>(counted);
      m.mean_bounded_slowdown /= static_cast<double>(counted);
    }
    out.per_run.push_back(m);
  }
  return out;
}

}  // namespace trellis
