// sprio: each pending job's priority and the weighted factors it is made of, in sprio's columns
// (only the factors whose weight is not 0, as sprio shows them): default, -l (user, every
// factor), -n (normalised factors), -w (the weights), -h, -j JOBS, -u USERS, -o is not taken.
#include <getopt.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>

#include "cli/live_client.h"
#include "cli/slurm/slurm_command.h"
#include "cli/slurm/slurm_help.h"
#include "daemon/grpc_status.h"

namespace trellis::cli::slurm {
namespace {

const std::vector<LongOption> kOptions = {
    {"noheader", no_argument, 'h', nullptr, "no headers on output"},
    {"jobs", required_argument, 'j', "job_id_list", "comma separated list of jobs to view"},
    {"long", no_argument, 'l', nullptr, "long report"},
    {"norm", no_argument, 'n', nullptr, "display normalized values"},
    {"user", required_argument, 'u', "user_list", "comma separated list of users to view"},
    {"weights", no_argument, 'w', nullptr, "display the weights of the priority factors"},
    {"verbose", no_argument, 'v', nullptr, "display more information"},
    {"format", required_argument, 'o'},
    {"sort", required_argument, 'S'},
};

std::string right(const std::string& text, size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}
std::string left(const std::string& text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}
std::string whole(double value) {
  return std::to_string(std::llround(value));
}
std::string decimals(double value, int places) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", places, value);
  return text;
}

}  // namespace

int sprio_main(const std::vector<std::string>& args) {
  static const CommandHelp help{"sprio", "[OPTIONS]", kOptions, {.h_is_help = false}};
  if (std::optional<int> status = answer_help(args, help)) return *status;
  Result<ParsedArgs> parsed = parse_options(args, "hj:lnu:wvo:S:", kOptions);
  if (!parsed) return report_error("sprio", parsed.error());
  bool noheader = false, long_form = false, norm = false, weights_only = false;
  std::set<int64_t> ids;
  std::set<std::string> users;
  for (const Parsed& o : parsed->options) {
    if (o.id == 'h') noheader = true;
    if (o.id == 'l') long_form = true;
    if (o.id == 'n') norm = true;
    if (o.id == 'w') weights_only = true;
    if (o.id == 'o' || o.id == 'S')
      return report_error("sprio", fail(o.word + " is not supported by Trellis (use -l or -n)"));
    if (o.id == 'j')
      for (const std::string& id : split_list(o.value)) {
        if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
          return report_error("sprio", fail("-j: '" + id + "' is not a job id"));
        ids.insert(std::stoll(id));
      }
    if (o.id == 'u')
      for (const std::string& u : split_list(o.value)) users.insert(u);
  }
  Result<LiveClient> client = connect_to_cluster("");
  if (!client) return report_error("sprio", client.error());
  const PrioritySettings& weights = client->config.priority;
  // Which factors are shown: those with a weight (sprio leaves the others out unless -l).
  const bool age = long_form || weights.weight_age > 0;
  const bool fair = long_form || weights.weight_fairshare > 0;
  const bool size = long_form || weights.weight_jobsize > 0;
  const bool qos = long_form || weights.weight_qos > 0;
  std::string head = right("JOBID", 15) + " " + left("PARTITION", 9);
  if (long_form) head += " " + right("USER", 8);
  if (norm && !long_form) {
    head += " " + left("PRIORITY", 10);
    if (age) head += " " + left("AGE", 10);
    if (fair) head += " " + left("FAIRSHARE", 10);
    if (size) head += " " + left("JOBSIZE", 10);
    if (qos) head += " " + left("QOS", 10);
  } else {
    head += " " + right("PRIORITY", 10) + " " + right("SITE", 10);
    if (age) head += " " + right("AGE", 10);
    if (long_form) head += " " + right("ASSOC", 10);
    if (fair) head += " " + right("FAIRSHARE", 10);
    if (size) head += " " + right("JOBSIZE", 10);
    if (long_form)
      head += " " + right("PARTITION", 10) + " " + right("QOS", 10) + " " + right("NICE", 11) +
              " " + right("TRES", 20);
    else if (qos)
      head += " " + right("QOS", 10);
  }
  if (!noheader) std::cout << head << "\n";
  if (weights_only) {
    std::string line =
        right("Weights", 15) + " " + left("", 9) + " " + right("", 10) + " " + right("1", 10);
    if (age) line += " " + right(whole(weights.weight_age), 10);
    if (fair) line += " " + right(whole(weights.weight_fairshare), 10);
    if (size) line += " " + right(whole(weights.weight_jobsize), 10);
    if (qos) line += " " + right(whole(weights.weight_qos), 10);
    std::cout << line << "\n";
    return 0;
  }
  v1::ListJobsRequest request;
  request.add_states(v1::PENDING);
  for (int64_t id : ids) request.add_job_ids(id);
  Result<v1::ListJobsReply> reply = list_jobs(*client, request);
  if (!reply) return report_error("sprio", reply.error());
  for (const v1::JobInfo& job : reply->jobs()) {
    if (job.state() != v1::PENDING || !job.has_priority()) continue;
    if (!users.empty() && !users.count(job.user())) continue;
    std::string line = right(std::to_string(job.id()), 15) + " " + left(job.spec().partition(), 9);
    if (long_form) line += " " + right(job.user(), 8);
    if (norm && !long_form) {
      // sprio -n: the priority over 2^32 (Slurm's largest), and each factor in [0, 1].
      line += " " + left(decimals(job.priority() / 4294967296.0, 8), 10);
      if (age) line += " " + left(decimals(job.age_factor(), 7), 10);
      if (fair) line += " " + left(decimals(job.fairshare_factor(), 7), 10);
      if (size) line += " " + left(decimals(job.jobsize_factor(), 7), 10);
      if (qos) line += " " + left(decimals(job.qos_factor(), 7), 10);
    } else {
      line += " " + right(whole(job.priority()), 10) + " " + right("0", 10);
      if (age) line += " " + right(whole(weights.weight_age * job.age_factor()), 10);
      if (long_form) line += " " + right("0", 10);
      if (fair) line += " " + right(whole(weights.weight_fairshare * job.fairshare_factor()), 10);
      if (size) line += " " + right(whole(weights.weight_jobsize * job.jobsize_factor()), 10);
      const std::string qos_points = right(whole(weights.weight_qos * job.qos_factor()), 10);
      if (long_form)
        line +=
            " " + right("0", 10) + " " + qos_points + " " + right("0", 11) + " " + right("", 20);
      else if (qos)
        line += " " + qos_points;
    }
    std::cout << line << "\n";
  }
  return 0;
}

}  // namespace trellis::cli::slurm
