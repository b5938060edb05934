#include "core/qos.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/slurm_time.h"

namespace trellis {
namespace {

constexpr int64_t kMostPriority = 4294967294;  // Slurm keeps QOS Priority in 32 bits
constexpr int64_t kMostJobs = 999999999;
constexpr double kMostUsageFactor = 1000;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A whole number in [0, most], or -1 (clear) when `clearable`.
Result<std::optional<int64_t>> parse_count(std::string_view key, std::string_view text,
                                           int64_t most, std::string_view unit) {
  if (text == "-1") return std::optional<int64_t>();
  if (!all_digits(text) || text.size() > 10 || std::stoll(std::string(text)) > most)
    return fail(std::string(key) + ": '" + std::string(text) + "' is not a number of " +
                std::string(unit) + " (0-" + std::to_string(most) + ", or -1 to clear)");
  return std::optional<int64_t>(std::stoll(std::string(text)));
}

Result<double> parse_usage_factor(std::string_view text) {
  double value = -1;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || err != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value) || value < 0 || value > kMostUsageFactor)
    return fail("UsageFactor: '" + std::string(text) +
                "' is not a factor (a number from 0 to 1000; 1 charges what a job uses)");
  return value;
}

// Flags=DenyOnLimit, Flags+=, Flags-= and Flags=-1 (none), any case.
Status apply_flags(const std::string& key, const std::string& value, Qos& qos) {
  if (value == "-1" || lower(value) == "none") {
    qos.deny_on_limit = false;
    return Ok{};
  }
  bool deny = key == "flags" ? false : qos.deny_on_limit;
  std::stringstream items(value);
  for (std::string item; std::getline(items, item, ',');) {
    if (lower(item) != "denyonlimit")
      return fail("Flags: '" + item +
                  "' is not a flag Trellis keeps (DenyOnLimit; -1 clears the flags)");
    deny = key != "flags-";
  }
  qos.deny_on_limit = deny;
  return Ok{};
}

Status apply_one(const std::string& key, const std::string& value, Qos& qos) {
  if (key == "description") {
    qos.description = value;
  } else if (key == "priority") {
    Result<std::optional<int64_t>> p = parse_count("Priority", value, kMostPriority, "points");
    if (!p) return p.error();
    qos.priority = p->value_or(0);
  } else if (key == "usagefactor") {
    Result<double> factor = parse_usage_factor(value);
    if (!factor) return factor.error();
    qos.usage_factor = *factor;
  } else if (key == "maxjobsperuser" || key == "maxjobspu") {
    Result<std::optional<int64_t>> n = parse_count("MaxJobsPerUser", value, kMostJobs, "jobs");
    if (!n) return n.error();
    qos.max_jobs_per_user = *n;
  } else if (key == "maxsubmitjobsperuser" || key == "maxsubmitpu" || key == "maxsubmitjobspu") {
    Result<std::optional<int64_t>> n =
        parse_count("MaxSubmitJobsPerUser", value, kMostJobs, "jobs");
    if (!n) return n.error();
    qos.max_submit_per_user = *n;
  } else if (key == "maxtresperuser" || key == "maxtrespu") {
    Result<Tres> tres = parse_tres(value, "MaxTRESPerUser");
    if (!tres) return tres.error();
    qos.max_tres_per_user = merge_tres(qos.max_tres_per_user, *tres);
  } else if (key == "grptres") {
    Result<Tres> tres = parse_tres(value, "GrpTRES");
    if (!tres) return tres.error();
    qos.grp_tres = merge_tres(qos.grp_tres, *tres);
  } else if (key == "maxwall" || key == "maxwalldurationperjob") {
    Result<std::optional<int64_t>> wall = parse_wall(value, "MaxWall");
    if (!wall) return wall.error();
    qos.max_wall = *wall;
  } else if (key == "flags" || key == "flags+" || key == "flags-") {
    return apply_flags(key, value, qos);
  } else if (key == "preempt" || key == "preemptmode" || key == "gracetime" ||
             key == "preemptexempttime") {
    return fail(key +
                ": preemption is not built in Trellis yet, so a QOS cannot name what it preempts "
                "or how (the key is refused rather than kept and ignored)");
  } else {
    return fail("unknown field '" + key +
                "' for a QOS (Description, Priority, UsageFactor, MaxJobsPerUser, "
                "MaxSubmitJobsPerUser, MaxTRESPerUser, GrpTRES, MaxWall, Flags)");
  }
  return Ok{};
}

}  // namespace

Status apply_qos_settings(const std::map<std::string, std::string>& set, Qos& qos) {
  Qos changed = qos;
  for (const auto& [key, value] : set)
    if (Status s = apply_one(key, value, changed); !s) return s;
  qos = std::move(changed);
  return Ok{};
}

std::string encode_qos_settings(const Qos& qos) {
  std::string out;
  auto add = [&](const std::string& item) { out += (out.empty() ? "" : " ") + item; };
  if (qos.priority != 0) add("priority=" + std::to_string(qos.priority));
  if (qos.usage_factor != 1) add("usagefactor=" + format_usage_factor(qos.usage_factor));
  if (qos.max_jobs_per_user) add("maxjobsperuser=" + std::to_string(*qos.max_jobs_per_user));
  if (qos.max_submit_per_user)
    add("maxsubmitjobsperuser=" + std::to_string(*qos.max_submit_per_user));
  if (!qos.max_tres_per_user.empty()) add("maxtresperuser=" + format_tres(qos.max_tres_per_user));
  if (!qos.grp_tres.empty()) add("grptres=" + format_tres(qos.grp_tres));
  if (qos.max_wall) add("maxwall=" + format_wall(*qos.max_wall));
  if (qos.deny_on_limit) add("flags=denyonlimit");
  return out;
}

Status decode_qos_settings(std::string_view text, Qos& qos) {
  std::map<std::string, std::string> set;
  std::stringstream words{std::string(text)};
  for (std::string word; words >> word;) {
    size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("qos " + qos.name + ": '" + word + "' is not KEY=VALUE");
    set[word.substr(0, eq)] = word.substr(eq + 1);
  }
  if (Status s = apply_qos_settings(set, qos); !s)
    return fail("qos " + qos.name + ": " + s.error().message);
  return Ok{};
}

std::string format_wall(int64_t seconds) {
  return format_elapsed(static_cast<Seconds>(seconds));
}

std::string format_usage_factor(double factor) {
  char text[64];
  std::snprintf(text, sizeof text, "%f", factor);
  return text;
}

std::string format_qos_flags(const Qos& qos) {
  return qos.deny_on_limit ? "DenyOnLimit" : "";
}

Result<std::optional<int64_t>> parse_wall(std::string_view text, std::string_view what) {
  if (text == "-1" || lower(std::string(text)) == "unlimited") return std::optional<int64_t>();
  Result<Seconds> seconds = parse_slurm_time(text);
  if (!seconds) return fail(std::string(what) + ": " + seconds.error().message);
  return std::optional<int64_t>(static_cast<int64_t>(*seconds));
}

}  // namespace trellis
