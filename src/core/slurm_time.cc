#include "core/slurm_time.h"

#include <charconv>
#include <cstdio>
#include <vector>

namespace trellis {
namespace {

Result<long> field(std::string_view text, std::string_view whole) {
  long value = -1;
  auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || err != std::errc() || end != text.data() + text.size() || value < 0 ||
      value > 1'000'000)
    return fail("time '" + std::string(whole) +
                "' is not minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS");
  return value;
}

}  // namespace

Result<Seconds> parse_slurm_time(std::string_view text) {
  long days = 0;
  std::string_view rest = text;
  bool has_days = false;
  if (size_t dash = text.find('-'); dash != std::string_view::npos) {
    Result<long> d = field(text.substr(0, dash), text);
    if (!d) return d.error();
    days = *d;
    rest = text.substr(dash + 1);
    has_days = true;
  }
  std::vector<long> parts;
  size_t start = 0;
  for (;;) {
    size_t colon = rest.find(':', start);
    Result<long> part = field(rest.substr(start, colon - start), text);
    if (!part) return part.error();
    parts.push_back(*part);
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  long seconds = 0;
  if (has_days) {
    // days-hours[:minutes[:seconds]]
    if (parts.size() > 3) return field("", text).error();
    long units[3] = {3600, 60, 1};
    for (size_t i = 0; i < parts.size(); ++i) seconds += parts[i] * units[i];
  } else if (parts.size() == 1) {
    seconds = parts[0] * 60;
  } else if (parts.size() == 2) {
    seconds = parts[0] * 60 + parts[1];
  } else if (parts.size() == 3) {
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  } else {
    return field("", text).error();
  }
  return static_cast<Seconds>(days * 86400 + seconds);
}

namespace {

// Days, then hours, minutes and seconds as "%02ld:%02ld:%02ld" (squeue drops the leading zero
// fields: `short_form`); a negative length is 0.
std::string format_length(Seconds seconds, bool short_form) {
  const long total = seconds < 0 ? 0 : static_cast<long>(seconds);
  const long days = total / 86400, hours = total / 3600 % 24, minutes = total / 60 % 60,
             secs = total % 60;
  char text[48];
  if (days > 0)
    std::snprintf(text, sizeof text, "%ld-%02ld:%02ld:%02ld", days, hours, minutes, secs);
  else if (!short_form)
    std::snprintf(text, sizeof text, "%02ld:%02ld:%02ld", hours, minutes, secs);
  else if (hours > 0)
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", hours, minutes, secs);
  else
    std::snprintf(text, sizeof text, "%ld:%02ld", minutes, secs);
  return text;
}

}  // namespace

std::string format_slurm_time(Seconds seconds) {
  return format_length(seconds, true);
}

std::string format_elapsed(Seconds seconds) {
  return format_length(seconds, false);
}

}  // namespace trellis
