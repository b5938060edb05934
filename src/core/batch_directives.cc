#include "core/batch_directives.h"

namespace trellis {
namespace {

constexpr std::string_view kPrefixes[] = {"#SBATCH", "#TRELLIS"};

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// Splits the rest of a directive line into words; false on an unterminated quote.
bool split_words(std::string_view text, std::vector<std::string>& words) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_blank(text[i])) ++i;
    if (i == text.size() || text[i] == '#') return true;  // the end, or a comment
    std::string word;
    char quote = 0;
    for (; i < text.size() && (quote || !is_blank(text[i])); ++i) {
      char c = text[i];
      if (quote) {
        if (c == quote) {
          quote = 0;
        } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
          word += text[++i];
        } else {
          word += c;
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '\\' && i + 1 < text.size()) {
        word += text[++i];
      } else {
        word += c;
      }
    }
    if (quote) return false;
    words.push_back(std::move(word));
  }
  return true;
}

}  // namespace

Result<std::vector<std::string>> read_directives(std::string_view script) {
  std::vector<std::string> words;
  int number = 0;
  for (size_t from = 0; from < script.size();) {
    size_t end = script.find('\n', from);
    std::string_view line =
        script.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from);
    from = end == std::string_view::npos ? script.size() : end + 1;
    ++number;
    size_t first = 0;
    while (first < line.size() && is_blank(line[first])) ++first;
    if (first == line.size()) continue;  // blank
    if (line[first] != '#') break;       // the first command: directives end
    for (std::string_view prefix : kPrefixes) {
      if (first != 0 || !line.starts_with(prefix)) continue;
      std::string_view rest = line.substr(prefix.size());
      if (!rest.empty() && !is_blank(rest[0])) continue;  // "#SBATCHX": a comment
      if (!split_words(rest, words))
        return fail("line " + std::to_string(number) + ": unterminated quote in '" +
                    std::string(line) + "'");
      if (words.size() > kMaxDirectiveWords)
        return fail("line " + std::to_string(number) + ": more than " +
                    std::to_string(kMaxDirectiveWords) + " directive words");
    }
  }
  return words;
}

}  // namespace trellis
