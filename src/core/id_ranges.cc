#include "core/id_ranges.h"

#include <algorithm>
#include <charconv>

namespace trellis {

std::string format_id_ranges(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string text;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(ids[i]);
    if (j > i) text += '-' + std::to_string(ids[j]);
    i = j + 1;
  }
  return text;
}

Result<std::vector<int>> parse_id_ranges(std::string_view text, int64_t limit) {
  std::vector<std::pair<int, int>> ranges;
  int64_t total = 0;
  auto number = [](std::string_view piece, int& out) {
    if (piece.empty()) return false;
    auto [end, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), out);
    return ec == std::errc() && end == piece.data() + piece.size() && out >= 0;
  };
  size_t at = 0;
  while (at < text.size() || (at == text.size() && !text.empty() && text.back() == ',')) {
    size_t comma = text.find(',', at);
    std::string_view piece =
        text.substr(at, comma == std::string_view::npos ? text.npos : comma - at);
    size_t dash = piece.find('-');
    int first = 0, last = 0;
    bool ok = dash == std::string_view::npos
                  ? number(piece, first) && ((last = first), true)
                  : number(piece.substr(0, dash), first) && number(piece.substr(dash + 1), last) &&
                        first <= last;
    if (!ok) {
      // Built by appending: GCC 12 warns (-Wrestrict, wrongly) on "'" + std::string(...).
      std::string message = "'";
      message.append(piece).append("' in the id ranges '").append(text);
      message.append("' is not an id or a range a-b (a <= b)");
      return fail(message);
    }
    total += int64_t{last} - first + 1;
    if (total > limit)
      return fail("the id ranges '" + std::string(text.substr(0, 60)) + "' hold more than " +
                  std::to_string(limit) + " ids");
    ranges.emplace_back(first, last);
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<int> ids;
  ids.reserve(static_cast<size_t>(total));
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (i > 0 && ranges[i].first <= ranges[i - 1].second)
      return fail("the id ranges '" + std::string(text.substr(0, 60)) + "' name id " +
                  std::to_string(ranges[i].first) + " twice");
    for (int id = ranges[i].first;; ++id) {
      ids.push_back(id);
      if (id == ranges[i].second) break;
    }
  }
  return ids;
}

}  // namespace trellis
