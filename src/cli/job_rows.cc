#include "cli/job_rows.h"

#include <charconv>
#include <map>
#include <set>

#include "core/job_array.h"

namespace trellis::cli {

std::string display_id(const v1::JobInfo& job) {
  if (job.array_job_id() == 0) return std::to_string(job.id());
  return std::to_string(job.array_job_id()) + "_" + std::to_string(job.array_task_id());
}

std::vector<JobRow> job_rows(const std::vector<v1::JobInfo>& jobs, bool compress_pending_arrays) {
  std::vector<JobRow> rows;
  std::map<int64_t, std::vector<int>> pending_tasks;  // array -> its pending tasks
  std::map<int64_t, size_t> row_of;                   // array -> its compressed row
  for (const v1::JobInfo& job : jobs) {
    bool compress =
        compress_pending_arrays && job.array_job_id() != 0 && job.state() == v1::PENDING;
    if (!compress) {
      rows.push_back({&job, display_id(job)});
      continue;
    }
    pending_tasks[job.array_job_id()].push_back(job.array_task_id());
    if (!row_of.count(job.array_job_id())) {
      row_of[job.array_job_id()] = rows.size();
      rows.push_back({&job, ""});
    }
  }
  for (auto& [array, tasks] : pending_tasks) {
    JobRow& row = rows[row_of[array]];
    std::sort(tasks.begin(), tasks.end());
    std::string ranges = format_task_ranges(tasks);
    int limit = row.job->array_limit();
    if (tasks.size() == 1 && limit == 0) {
      row.id = std::to_string(array) + "_" + ranges;
    } else {
      row.id = std::to_string(array) + "_[" + ranges +
               (limit > 0 ? "%" + std::to_string(limit) : "") + "]";
    }
  }
  return rows;
}

Result<std::vector<int64_t>> resolve_job_ids(LiveClient& client,
                                             const std::vector<std::string>& texts) {
  std::vector<int64_t> out;
  for (const std::string& text : texts) {
    size_t underscore = text.find('_');
    std::string head = text.substr(0, underscore);
    int64_t id = 0;
    auto [end, ec] = std::from_chars(head.data(), head.data() + head.size(), id);
    if (head.empty() || ec != std::errc() || end != head.data() + head.size() || id <= 0)
      return fail("'" + text + "' is not a job id (e.g. 12, 12_3, 12_[1-3])");
    std::string tasks = underscore == std::string::npos ? "*" : text.substr(underscore + 1);
    if (tasks == "*") {
      // A job, or every task of an array: the ids the store gives for it (the id itself when it
      // gives none, so that the call that follows says it does not exist).
      v1::ListJobsRequest request;
      request.add_job_ids(id);
      request.set_all_states(true);
      Result<v1::ListJobsReply> reply = list_jobs(client, request);
      if (!reply) return reply.error();
      if (reply->jobs().empty()) out.push_back(id);
      for (const v1::JobInfo& job : reply->jobs()) out.push_back(job.id());
      continue;
    }
    if (tasks.size() >= 2 && tasks.front() == '[' && tasks.back() == ']')
      tasks = tasks.substr(1, tasks.size() - 2);
    Result<ArraySpec> wanted = parse_array_spec(tasks, 1 << 30);
    if (!wanted || wanted->limit != 0)
      return fail("'" + text + "': '" + tasks + "' is not a list of array task ids");
    v1::ListJobsRequest request;
    request.add_job_ids(id);
    request.set_all_states(true);
    Result<v1::ListJobsReply> reply = list_jobs(client, request);
    if (!reply) return reply.error();
    std::set<int> found;
    for (const v1::JobInfo& job : reply->jobs()) {
      if (job.array_job_id() != id) continue;
      if (std::binary_search(wanted->tasks.begin(), wanted->tasks.end(), job.array_task_id())) {
        out.push_back(job.id());
        found.insert(job.array_task_id());
      }
    }
    for (int task : wanted->tasks)
      if (!found.count(task))
        return fail(Error::Code::kNotFound,
                    "job " + std::to_string(id) + "_" + std::to_string(task) + " does not exist");
  }
  return out;
}

}  // namespace trellis::cli
