#include "cli/slurm/slurm_help.h"

#include <cctype>
#include <iostream>
#include <set>

#ifndef TRELLIS_VERSION
#define TRELLIS_VERSION "unknown"
#endif

namespace trellis::cli::slurm {
namespace {

constexpr size_t kTextColumn = 30;
constexpr size_t kWidth = 80;
// The release whose options and formats the front ends follow (their golden outputs were
// recorded from it: tests/golden/slurm).
constexpr const char* kSlurmRelease = "22.05.8";

bool has_short(const LongOption& o) {
  return o.id > 0 && o.id < 128 && std::isalpha(o.id);
}

// "  -J, --job-name=jobname" or "      --wrap=command string".
std::string option_words(const LongOption& o) {
  std::string words = "  ";
  if (has_short(o)) {
    words += '-';
    words += static_cast<char>(o.id);
    words += ", ";
  } else {
    words += "    ";
  }
  words += "--";
  words += o.name;
  const char* argument = o.argument ? o.argument : "value";
  if (o.has_arg == required_argument) words += std::string("=") + argument;
  if (o.has_arg == optional_argument && o.argument) words += std::string("[=") + argument + "]";
  return words;
}

// `text` folded into lines of at most kWidth columns: the first goes on from `first_column`, the
// others start after `indent` spaces.
std::string fold(std::string_view text, size_t first_column, size_t indent) {
  std::string out;
  size_t column = first_column;
  bool line_empty = true;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (!line_empty && column + 1 + word.size() > kWidth) {
      out += '\n';
      out.append(indent, ' ');
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_empty = false;
  }
  return out;
}

// Whether the option `word` ("--output", "-o") takes the next word as its value.
bool takes_next_word(const std::string& word, const std::vector<LongOption>& options) {
  for (const LongOption& o : options) {
    if (o.has_arg != required_argument) continue;
    if (word == std::string("--") + o.name) return true;
    if (word.size() == 2 && has_short(o) && word[1] == static_cast<char>(o.id)) return true;
  }
  return false;
}

// Options with no text that are not another name of one with text: those Trellis refuses.
std::vector<std::string> refused(const CommandHelp& help) {
  std::set<int> explained;
  for (const LongOption& o : help.options)
    if (o.help) explained.insert(o.id);
  std::vector<std::string> names;
  for (const LongOption& o : help.options)
    if (!o.help && !explained.contains(o.id)) names.push_back(std::string("--") + o.name);
  return names;
}

}  // namespace

std::string version_text() {
  return std::string("slurm ") + kSlurmRelease + " (trellis " + TRELLIS_VERSION + ")";
}

std::string help_text(const CommandHelp& help) {
  std::string out =
      "Usage: " + std::string(help.command) + " " + std::string(help.synopsis) + "\n\n";
  auto line = [&](const std::string& words, std::string_view text) {
    out += words;
    size_t column = words.size();
    if (column + 2 > kTextColumn) {
      out += '\n';
      column = 0;
    }
    out.append(kTextColumn - column, ' ');
    out += fold(text, kTextColumn, kTextColumn);
    out += '\n';
  };
  for (const LongOption& o : help.options)
    if (o.help) line(option_words(o), o.help);
  out += "\nHelp options:\n";
  line(help.flags.h_is_help ? "  -h, --help" : "      --help", "show this help message");
  line("      --usage", "display brief usage message");
  line("  -V, --version", "output version information and exit");
  if (!help.notes.empty()) out += "\n" + fold(help.notes, 0, 0) + "\n";
  std::vector<std::string> names = refused(help);
  std::string closing = "This is Trellis's " + std::string(help.command) + ", which speaks Slurm " +
                        kSlurmRelease + "'s options and formats.";
  if (!names.empty()) {
    closing += " Slurm's";
    for (size_t i = 0; i < names.size(); ++i)
      closing += (i == 0 ? " " : i + 1 == names.size() ? " and " : ", ") + names[i];
    closing += (names.size() == 1 ? " is" : " are") + std::string(" refused with their name.");
  }
  closing += " README.md, \"Coming from Slurm\", says what each option does here.";
  out += "\n" + fold(closing, 0, 0) + "\n";
  return out;
}

std::string usage_text(const CommandHelp& help) {
  const std::string start = "Usage: " + std::string(help.command) + " ";
  std::string out = start;
  size_t column = start.size();
  const size_t indent = start.size();
  auto add = [&](const std::string& item) {
    if (column > indent && column + 1 + item.size() > kWidth) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += ' ';
      ++column;
    }
    out += item;
    column += item.size();
  };
  std::set<int> listed;  // an option given two names is listed once
  for (const LongOption& o : help.options) {
    if (!o.help || !listed.insert(o.id).second) continue;
    std::string item = "[";
    if (has_short(o)) {
      item += '-';
      item += static_cast<char>(o.id);
      if (o.has_arg == required_argument)
        item += std::string(" ") + (o.argument ? o.argument : "value");
    } else {
      item += "--";
      item += o.name;
      if (o.has_arg == required_argument)
        item += std::string("=") + (o.argument ? o.argument : "value");
    }
    add(item + "]");
  }
  add(std::string(help.synopsis));
  return out + "\n";
}

std::optional<int> answer_help(const std::vector<std::string>& args, const CommandHelp& help,
                               std::ostream& out) {
  bool skip_next = false;
  for (const std::string& word : args) {
    if (skip_next) {
      skip_next = false;
      continue;
    }
    if (word == "--") break;
    if (word == "--help" || (word == "-h" && help.flags.h_is_help)) {
      out << help_text(help);
      return 0;
    }
    if (word == "--usage") {
      out << usage_text(help);
      return 0;
    }
    if (word == "--version" || word == "-V") {
      out << version_text() << "\n";
      return 0;
    }
    if (help.flags.options_end_at_command) {
      if (!word.starts_with("-")) break;
      // An option whose value is the next word: that word is no command.
      if (takes_next_word(word, help.options)) skip_next = true;
    }
  }
  return std::nullopt;
}

std::optional<int> answer_help(const std::vector<std::string>& args, const CommandHelp& help) {
  return answer_help(args, help, std::cout);
}

}  // namespace trellis::cli::slurm
