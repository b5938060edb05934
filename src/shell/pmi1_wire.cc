#include "shell/pmi1_wire.h"

namespace trellis {

const std::string* Pmi1Request::field(std::string_view key) const {
  const std::string* found = nullptr;
  for (const auto& [k, v] : fields)
    if (k == key) found = &v;
  return found;
}

Result<Pmi1Request> parse_pmi1_line(std::string_view line) {
  auto at = [&](size_t column, const std::string& what) {
    return fail("PMI line, column " + std::to_string(column + 1) + ": " + what);
  };
  if (line.size() >= kPmi1MaxLine)
    return fail("PMI line of " + std::to_string(line.size()) + " bytes; at most " +
                std::to_string(kPmi1MaxLine - 1) + " before its newline");
  for (size_t i = 0; i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return at(i, "control byte " + std::to_string(c) + " in the line");
  }
  Pmi1Request request;
  size_t i = 0;
  bool first = true;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) break;
    size_t start = i;
    while (i < line.size() && line[i] != '=' && line[i] != ' ' && line[i] != '\t') ++i;
    if (i == line.size() || line[i] != '=')
      return at(start,
                "token '" + std::string(line.substr(start, i - start)) + "' is not key=value");
    std::string key(line.substr(start, i - start));
    if (key.empty()) return at(start, "a token with an empty key");
    ++i;  // '='
    size_t value_start = i;
    if (key == "value") {
      i = line.size();  // to the end of the line
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    }
    std::string value(line.substr(value_start, i - value_start));
    if (first) {
      if (key == "cmd") {
        request.cmd = value;
      } else if (key == "mcmd") {
        request.cmd = value;
        request.mcmd = true;
      } else {
        return at(start, "the first token is '" + key + "='; expected cmd= or mcmd=");
      }
      if (request.cmd.empty()) return at(value_start, "an empty command");
      first = false;
      continue;
    }
    request.fields.emplace_back(std::move(key), std::move(value));
  }
  if (first) return fail("PMI line: empty");
  return request;
}

std::string pmi1_reply(std::string_view cmd,
                       const std::vector<std::pair<std::string_view, std::string>>& fields) {
  std::string out = "cmd=";
  out += cmd;
  for (const auto& [key, value] : fields) {
    out += ' ';
    out += key;
    out += '=';
    out += value.substr(0, value.find('\n'));
  }
  out += '\n';
  return out;
}

}  // namespace trellis
