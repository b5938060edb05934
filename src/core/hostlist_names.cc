#include "core/hostlist_names.h"

#include <charconv>

namespace trellis {

Result<std::vector<std::string>> expand_hostlist_names(std::string_view hostlist,
                                                       size_t max_names) {
  std::vector<std::string> names;
  auto error = [&](size_t column, const std::string& what) {
    return fail("hostlist '" + std::string(hostlist.substr(0, 200)) + "', column " +
                std::to_string(column + 1) + ": " + what);
  };
  auto too_many = [&] {
    return fail("hostlist: more than " + std::to_string(max_names) + " names");
  };
  size_t at = 0;
  while (at <= hostlist.size()) {
    size_t start = at;
    size_t bracket = std::string_view::npos;
    while (at < hostlist.size() && hostlist[at] != ',') {
      if (hostlist[at] == '[') {
        bracket = at;
        at = hostlist.find(']', at);
        if (at == std::string_view::npos) return error(bracket, "'[' without ']'");
      }
      ++at;
    }
    std::string_view part = hostlist.substr(start, at - start);
    if (part.empty()) return error(start, "an empty name");
    if (bracket == std::string_view::npos) {
      if (part.find(']') != std::string_view::npos) return error(start, "']' without '['");
      if (names.size() >= max_names) return too_many();
      names.emplace_back(part);
    } else {
      std::string_view prefix = hostlist.substr(start, bracket - start);
      size_t close = hostlist.find(']', bracket);
      if (close + 1 != at) return error(close + 1, "text after ']'");
      size_t r = bracket + 1;
      while (r < close) {
        auto number = [&](long& value) -> bool {
          const char* begin = hostlist.data() + r;
          auto [end, ec] = std::from_chars(begin, hostlist.data() + close, value);
          if (ec != std::errc() || end == begin || value < 0) return false;
          r += static_cast<size_t>(end - begin);
          return true;
        };
        size_t range_start = r;
        long lo = 0, hi = 0;
        if (!number(lo)) return error(range_start, "expected a number");
        // Leading zeros are kept: "n[01-03]" names n01, n02, n03.
        size_t width = r - range_start;
        hi = lo;
        if (r < close && hostlist[r] == '-') {
          ++r;
          if (!number(hi)) return error(r, "expected a number after '-'");
        }
        if (hi < lo) return error(range_start, "a range that runs backwards");
        if (names.size() + static_cast<size_t>(hi - lo + 1) > max_names) return too_many();
        for (long id = lo; id <= hi; ++id) {
          std::string digits = std::to_string(id);
          if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
          names.push_back(std::string(prefix) + digits);
        }
        if (r < close) {
          if (hostlist[r] != ',') return error(r, "expected ',' or ']'");
          ++r;
          if (r == close) return error(r, "',' before ']'");
        }
      }
      if (bracket + 1 == close) return error(bracket, "empty brackets");
    }
    if (at == hostlist.size()) break;
    ++at;  // ','
  }
  return names;
}

std::string compress_hostlist_names(const std::vector<std::string>& names) {
  // Each name as (prefix, number); a name with no digits at its end, or with a leading zero, is
  // written as it is.
  struct Split {
    std::string_view prefix;
    long number = -1;
  };
  auto split = [](const std::string& name) {
    size_t digits = name.size();
    while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
    Split s{name, -1};
    std::string_view tail = std::string_view(name).substr(digits);
    if (tail.empty() || tail.size() > 9 || (tail.size() > 1 && tail[0] == '0')) return s;
    long value = 0;
    std::from_chars(tail.data(), tail.data() + tail.size(), value);
    return Split{std::string_view(name).substr(0, digits), value};
  };
  std::string out;
  for (size_t i = 0; i < names.size();) {
    Split first = split(names[i]);
    if (!out.empty()) out += ',';
    if (first.number < 0 || first.prefix.find_first_of("[],") != std::string_view::npos) {
      out += names[i++];
      continue;
    }
    // The run of names of this prefix with ascending numbers.
    std::vector<long> numbers{first.number};
    size_t j = i + 1;
    for (; j < names.size(); ++j) {
      Split next = split(names[j]);
      if (next.number < 0 || next.prefix != first.prefix || next.number <= numbers.back()) break;
      numbers.push_back(next.number);
    }
    out += first.prefix;
    if (numbers.size() == 1) {
      out += std::to_string(numbers[0]);
    } else {
      out += '[';
      for (size_t k = 0; k < numbers.size();) {
        size_t m = k;
        while (m + 1 < numbers.size() && numbers[m + 1] == numbers[m] + 1) ++m;
        if (k > 0) out += ',';
        out += std::to_string(numbers[k]);
        if (m > k) out += '-' + std::to_string(numbers[m]);
        k = m + 1;
      }
      out += ']';
    }
    i = j;
  }
  return out;
}

}  // namespace trellis
