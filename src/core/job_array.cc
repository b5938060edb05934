#include "core/job_array.h"

#include <algorithm>
#include <charconv>

namespace trellis {
namespace {

// A non-negative decimal integer that is the whole of `text`, below `bound`.
Result<int> task_number(std::string_view text, int bound, std::string_view what) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0)
    return fail("--array: " + std::string(what) + " '" + std::string(text) +
                "' is not a number >= 0");
  if (value >= bound)
    return fail("--array: " + std::string(what) + " " + std::to_string(value) +
                " is over the largest allowed (" + std::to_string(bound - 1) + ")");
  return value;
}

}  // namespace

Result<ArraySpec> parse_array_spec(std::string_view text, int max_tasks) {
  ArraySpec spec;
  if (text.empty()) return fail("--array: empty (e.g. 1-10, 0,3,7, 1-99:2, 1-100%10)");
  if (size_t percent = text.find('%'); percent != std::string_view::npos) {
    Result<int> limit = task_number(text.substr(percent + 1), 1 << 30, "the limit after %");
    if (!limit) return limit.error();
    if (*limit < 1) return fail("--array: the limit after % must be at least 1");
    spec.limit = *limit;
    text = text.substr(0, percent);
  }
  size_t from = 0;
  while (from <= text.size()) {
    size_t comma = text.find(',', from);
    std::string_view part =
        text.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from);
    from = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (part.empty()) return fail("--array: an empty element in '" + std::string(text) + "'");
    int step = 1;
    if (size_t colon = part.find(':'); colon != std::string_view::npos) {
      Result<int> parsed = task_number(part.substr(colon + 1), 1 << 30, "step");
      if (!parsed) return parsed.error();
      if (*parsed < 1)
        return fail("--array: step must be at least 1 in '" + std::string(part) + "'");
      step = *parsed;
      part = part.substr(0, colon);
      if (part.find('-') == std::string_view::npos)
        return fail("--array: a step needs a range (e.g. 1-99:2), not '" + std::string(part) + "'");
    }
    size_t dash = part.find('-');
    Result<int> first = task_number(part.substr(0, dash), max_tasks, "task id");
    if (!first) return first.error();
    int last = *first;
    if (dash != std::string_view::npos) {
      Result<int> parsed = task_number(part.substr(dash + 1), max_tasks, "task id");
      if (!parsed) return parsed.error();
      last = *parsed;
      if (last < *first)
        return fail("--array: range '" + std::string(part) + "' ends before it starts");
    }
    for (long id = *first; id <= last; id += step) spec.tasks.push_back(static_cast<int>(id));
    if (spec.tasks.size() > static_cast<size_t>(max_tasks))
      return fail("--array: more than " + std::to_string(max_tasks) + " tasks");
  }
  std::sort(spec.tasks.begin(), spec.tasks.end());
  spec.tasks.erase(std::unique(spec.tasks.begin(), spec.tasks.end()), spec.tasks.end());
  return spec;
}

std::string format_task_ranges(const std::vector<int>& tasks) {
  std::string out;
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(tasks[i]);
    if (j > i) out += '-' + std::to_string(tasks[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace trellis
