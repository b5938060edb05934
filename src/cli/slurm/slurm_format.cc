#include "cli/slurm/slurm_format.h"

#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/node_grant.h"
#include "core/slurm_time.h"

namespace trellis::cli::slurm {
namespace {

struct StateNames {
  v1::JobState state;
  const char* name;
  const char* code;
};
constexpr StateNames kStates[] = {
    {v1::PENDING, "PENDING", "PD"},     {v1::RUNNING, "RUNNING", "R"},
    {v1::SUSPENDED, "SUSPENDED", "S"},  {v1::COMPLETING, "COMPLETING", "CG"},
    {v1::COMPLETED, "COMPLETED", "CD"}, {v1::FAILED, "FAILED", "F"},
    {v1::CANCELLED, "CANCELLED", "CA"}, {v1::TIMEOUT, "TIMEOUT", "TO"},
    {v1::NODE_FAIL, "NODE_FAIL", "NF"}, {v1::OUT_OF_MEMORY, "OUT_OF_MEMORY", "OOM"},
};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string state_name(v1::JobState state) {
  for (const StateNames& s : kStates)
    if (s.state == state) return s.name;
  return "UNKNOWN";
}

std::string state_code(v1::JobState state) {
  for (const StateNames& s : kStates)
    if (s.state == state) return s.code;
  return "?";
}

Result<v1::JobState> parse_state(std::string_view text) {
  for (const StateNames& s : kStates)
    if (lower(text) == lower(s.name) || lower(text) == lower(s.code)) return s.state;
  std::string message(1, '\'');  // appended: GCC 12's -Wrestrict misreads "'" + string
  message += text;
  message +=
      "' is not a job state (PENDING RUNNING SUSPENDED COMPLETING COMPLETED FAILED CANCELLED "
      "TIMEOUT NODE_FAIL OUT_OF_MEMORY, or PD R S CG CD F CA TO NF OOM)";
  return fail(message);
}

std::string date(Seconds epoch) {
  if (epoch <= 0) return "Unknown";
  std::time_t seconds = static_cast<std::time_t>(epoch);
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  return text;
}

std::string elapsed(Seconds seconds) {
  return format_elapsed(seconds);
}

std::string squeue_time(Seconds seconds) {
  return format_slurm_time(seconds);
}

std::string time_limit(Seconds seconds, std::string (*format)(Seconds)) {
  return seconds <= 0 ? "UNLIMITED" : format(seconds);
}

std::string cpu_time(int64_t microseconds) {
  if (microseconds < 0) microseconds = 0;
  const int64_t seconds = microseconds / 1000000, milliseconds = microseconds % 1000000 / 1000;
  const int64_t days = seconds / 86400, hours = seconds / 3600 % 24, minutes = seconds / 60 % 60;
  char text[64];
  if (days > 0)
    std::snprintf(text, sizeof text, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                  static_cast<long long>(hours), static_cast<long long>(minutes),
                  static_cast<long long>(seconds % 60));
  else if (hours > 0)
    std::snprintf(text, sizeof text, "%02lld:%02lld:%02lld", static_cast<long long>(hours),
                  static_cast<long long>(minutes), static_cast<long long>(seconds % 60));
  else if (milliseconds > 0)
    std::snprintf(text, sizeof text, "%02lld:%02lld.%03lld", static_cast<long long>(minutes),
                  static_cast<long long>(seconds % 60), static_cast<long long>(milliseconds));
  else
    std::snprintf(text, sizeof text, "00:%02lld:%02lld", static_cast<long long>(minutes),
                  static_cast<long long>(seconds % 60));
  return text;
}

std::string max_rss_text(int64_t kib) {
  return kib <= 0 ? "0" : std::to_string(kib) + "K";
}

std::string exit_code(const v1::JobInfo& job) {
  return std::to_string(job.exit_code()) + ":" + std::to_string(job.signal());
}

std::string reason(const v1::JobInfo& job) {
  switch (job.state()) {
    case v1::PENDING: {
      // Held by the system (requeued max_requeue times after node failures) until an
      // administrator or the owner releases it: Slurm's reason for a job held that way.
      if (!job.hold().empty()) return "JobHeldAdmin";
      std::string text = job.reason().substr(0, job.reason().find(' '));
      return text.empty() ? "None" : text;
    }
    case v1::FAILED:
      if (job.signal() != 0) {
        const char* name = strsignal(job.signal());
        return "RaisedSignal:" + std::to_string(job.signal()) + "(" + (name ? name : "?") + ")";
      }
      return job.exit_code() != 0 ? "NonZeroExitCode" : "JobLaunchFailure";
    case v1::TIMEOUT:
      return "TimeLimit";
    case v1::NODE_FAIL:
      return "NodeDown";
    case v1::OUT_OF_MEMORY:
      return "OutOfMemory";
    default:
      return "None";
  }
}

Seconds run_seconds(const v1::JobInfo& job, Seconds now) {
  if (job.start_time() <= 0) return 0;
  Seconds end = job.end_time() > 0 ? job.end_time() : now;
  return std::max<Seconds>(0, end - job.start_time() - job.seconds_frozen());
}

std::string group_name(int gid) {
  struct group entry {};
  struct group* found = nullptr;
  char buffer[4096];
  if (getgrgid_r(static_cast<gid_t>(gid), &entry, buffer, sizeof buffer, &found) == 0 && found)
    return entry.gr_name;
  return std::to_string(gid);
}

Seconds now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Result<Seconds> parse_slurm_date(std::string_view text, Seconds now) {
  std::string t(text);
  auto bad = [&] {
    return fail("'" + t +
                "' is not a time (YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS], now[-N{minutes,hours,"
                "days}] or epoch seconds)");
  };
  if (t.starts_with("now")) {
    if (t.size() == 3) return now;
    char sign = t[3];
    if (sign != '-' && sign != '+') return bad();
    size_t i = 4;
    long n = 0;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])))
      n = n * 10 + (t[i++] - '0');
    std::string unit = lower(t.substr(i));
    long scale = 1;
    if (unit.empty() || unit.starts_with("s"))
      scale = 1;
    else if (unit.starts_with("m"))
      scale = 60;
    else if (unit.starts_with("h"))
      scale = 3600;
    else if (unit.starts_with("d"))
      scale = 86400;
    else if (unit.starts_with("w"))
      scale = 7 * 86400;
    else
      return bad();
    return now + (sign == '-' ? -1.0 : 1.0) * static_cast<Seconds>(n * scale);
  }
  if (!t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(c); }) &&
      t.size() > 8)
    return static_cast<Seconds>(std::stoll(t));
  std::tm tm{};
  std::time_t today = static_cast<std::time_t>(now);
  localtime_r(&today, &tm);
  tm.tm_isdst = -1;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int used = 0;
  if (std::sscanf(t.c_str(), "%4d-%2d-%2d%n", &year, &month, &day, &used) == 3) {
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    std::string rest = t.substr(used);
    if (!rest.empty()) {
      int n = std::sscanf(rest.c_str(), "T%2d:%2d:%2d", &hour, &minute, &second);
      if (n < 2) return bad();
      tm.tm_hour = hour;
      tm.tm_min = minute;
      tm.tm_sec = n == 3 ? second : 0;
    }
  } else {
    int n = std::sscanf(t.c_str(), "%2d:%2d:%2d", &hour, &minute, &second);
    if (n < 2) return bad();
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = n == 3 ? second : 0;
  }
  std::time_t at = std::mktime(&tm);
  if (at == static_cast<std::time_t>(-1)) return bad();
  return static_cast<Seconds>(at);
}

ResourceRequest job_resources(const v1::JobInfo& job) {
  Result<ResourceRequest> resources = decode_resource_request(job.spec().resources());
  return resources ? *resources : ResourceRequest{};
}

int64_t job_cpus(const v1::JobInfo& job) {
  const ResourceRequest r = job_resources(job);
  const int64_t tasks = std::max(job.ntasks(), job.spec().nodes());
  return std::max<int64_t>(job.spec().nodes(), tasks * std::max(r.cpus_per_task, 1));
}

std::string job_min_memory(const v1::JobInfo& job) {
  const ResourceRequest r = job_resources(job);
  if (r.mem_per_node_mb > 0) return format_memory_mb(r.mem_per_node_mb);
  if (r.mem_per_cpu_mb > 0) return format_memory_mb(r.mem_per_cpu_mb);
  if (r.mem_per_gpu_mb > 0) return format_memory_mb(r.mem_per_gpu_mb);
  return "0";
}

namespace {

// "gres:gpu:[TYPE:]N", or "" for no GPUs.
std::string gpu_tres(const ResourceRequest& r, int count) {
  if (count <= 0) return "";
  return "gres:gpu:" + (r.gpu_type.empty() ? "" : r.gpu_type + ":") + std::to_string(count);
}

}  // namespace

std::string job_qos(const v1::JobInfo& job) {
  if (!job.spec().qos().empty()) return job.spec().qos();
  return job.spec().account().empty() ? "(null)" : "normal";
}

std::string job_tres_per_node(const v1::JobInfo& job) {
  const ResourceRequest r = job_resources(job);
  std::string out = gpu_tres(r, r.gpus_per_node);
  for (const auto& [name, count] : r.counts)
    out += (out.empty() ? "gres:" : ",gres:") + name + ":" + std::to_string(count);
  return out.empty() ? "N/A" : out;
}

std::string job_tres_per_job(const v1::JobInfo& job) {
  const ResourceRequest r = job_resources(job);
  std::string out = gpu_tres(r, r.gpus);
  return out.empty() ? "N/A" : out;
}

std::string job_tres_per_task(const v1::JobInfo& job) {
  const ResourceRequest r = job_resources(job);
  std::string out = gpu_tres(r, r.gpus_per_task);
  return out.empty() ? "N/A" : out;
}

std::string job_tres(const v1::JobInfo& job, bool allocated) {
  int64_t cpus = 0, memory_mb = 0, gpus = 0;
  const int64_t nodes = std::max(job.spec().nodes(), 1);
  if (allocated) {
    if (job.grants().empty()) return "";
    Result<std::vector<NodeGrant>> grants = decode_grants(job.grants());
    if (!grants) return "";
    for (const NodeGrant& grant : *grants) {
      cpus += static_cast<int64_t>(grant.cores.size());
      memory_mb += grant.memory_mb;
      gpus += static_cast<int64_t>(grant.gpus.size());
    }
  } else {
    const ResourceRequest r = job_resources(job);
    if (!r.asks_resources()) return "";
    cpus = job_cpus(job);
    const int64_t tasks = std::max(job.ntasks(), job.spec().nodes());
    gpus = r.gpus > 0            ? r.gpus
           : r.gpus_per_node > 0 ? int64_t{r.gpus_per_node} * nodes
           : r.gpus_per_task > 0 ? int64_t{r.gpus_per_task} * tasks
                                 : 0;
    memory_mb = r.mem_per_node_mb > 0  ? r.mem_per_node_mb * nodes
                : r.mem_per_cpu_mb > 0 ? r.mem_per_cpu_mb * cpus
                : r.mem_per_gpu_mb > 0 ? r.mem_per_gpu_mb * gpus
                                       : 0;
  }
  std::string out = "cpu=" + std::to_string(cpus);
  if (memory_mb > 0) out += ",mem=" + format_memory_mb(memory_mb);
  out += ",node=" + std::to_string(nodes) + ",billing=" + std::to_string(cpus);
  if (gpus > 0) out += ",gres/gpu=" + std::to_string(gpus);
  return out;
}

Result<int> parse_user(std::string_view text) {
  std::string name(text);
  int uid = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), uid);
  if (!name.empty() && ec == std::errc() && end == name.data() + name.size() && uid >= 0)
    return uid;
  struct passwd entry {};
  struct passwd* found = nullptr;
  char buffer[4096];
  if (getpwnam_r(name.c_str(), &entry, buffer, sizeof buffer, &found) != 0 || !found)
    return fail("no user '" + name + "'");
  return static_cast<int>(found->pw_uid);
}

std::string print_header(const std::vector<PrintField>& fields, Parsable parsable) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    const PrintField& f = fields[i];
    if (parsable == Parsable::kNoEnding) {
      out += f.name + (i + 1 < fields.size() ? "|" : "");
    } else if (parsable == Parsable::kTrailing) {
      out += f.name + "|";
    } else {
      out += fit(f.name, std::abs(f.width), f.width > 0) + " ";
    }
  }
  out += "\n";
  if (parsable != Parsable::kNo) return out;
  for (const PrintField& f : fields) out += std::string(std::abs(f.width), '-') + " ";
  return out + "\n";
}

std::string print_row(const std::vector<PrintField>& fields, const std::vector<std::string>& values,
                      Parsable parsable) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& value = values[i];
    if (parsable == Parsable::kNoEnding) {
      out += value + (i + 1 < fields.size() ? "|" : "");
    } else if (parsable == Parsable::kTrailing) {
      out += value + "|";
    } else {
      int width = std::abs(fields[i].width);
      std::string shown = value.empty() ? " " : value;
      if (static_cast<int>(shown.size()) > width && width > 0) {
        shown.resize(width);
        shown.back() = '+';
      }
      out += fit(shown, width, fields[i].width > 0) + " ";
    }
  }
  return out + "\n";
}

Result<std::vector<FormatItem>> parse_format(std::string_view format, std::string_view codes,
                                             std::string_view command) {
  std::vector<FormatItem> items;
  std::string literal;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      literal += format[i];
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      literal += '%';
      ++i;
      continue;
    }
    if (!literal.empty()) items.push_back({0, 0, false, std::move(literal)});
    literal.clear();
    FormatItem item;
    size_t j = i + 1;
    if (j < format.size() && format[j] == '.') {
      item.right = true;
      ++j;
    }
    while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j]))) {
      item.width = std::min(item.width * 10 + (format[j] - '0'), 1024);
      ++j;
    }
    if (j >= format.size())
      return fail(std::string(command) + ": format '" + std::string(format) + "' ends in a '%'");
    item.code = format[j];
    if (codes.find(item.code) == std::string_view::npos)
      return fail(std::string(command) + ": format code '%" + std::string(1, item.code) +
                  "' is not supported by Trellis (README: \"Coming from Slurm\")");
    items.push_back(item);
    i = j;
  }
  if (!literal.empty()) items.push_back({0, 0, false, std::move(literal)});
  return items;
}

std::string fit(const std::string& value, int width, bool right) {
  if (width <= 0) return value;
  std::string cut = value.substr(0, width);
  std::string pad(width - cut.size(), ' ');
  return right ? pad + cut : cut + pad;
}

}  // namespace trellis::cli::slurm
