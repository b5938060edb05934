#include "cli/slurm/slurm_command.h"

#include <getopt.h>

#include <iostream>

namespace trellis::cli::slurm {

SlurmMain slurm_command(std::string_view name) {
  if (name == "sbatch") return sbatch_main;
  if (name == "squeue") return squeue_main;
  if (name == "scancel") return scancel_main;
  if (name == "sacct") return sacct_main;
  if (name == "sinfo") return sinfo_main;
  if (name == "scontrol") return scontrol_main;
  if (name == "srun") return srun_main;
  if (name == "sacctmgr") return sacctmgr_main;
  if (name == "sshare") return sshare_main;
  if (name == "sprio") return sprio_main;
  return nullptr;
}

const std::vector<std::string>& slurm_command_names() {
  static const std::vector<std::string> names = {
      "sbatch", "squeue", "scancel", "sacct", "sinfo", "scontrol", "sacctmgr", "sshare", "sprio"};
  return names;
}

int report_error(std::string_view command, const Error& error) {
  std::cerr << command << ": error: " << error.message << "\n";
  return error.code == Error::Code::kInvalidArgument ? 2 : 1;
}

std::vector<option> getopt_table(const std::vector<LongOption>& long_options) {
  std::vector<option> table;
  for (const LongOption& o : long_options) table.push_back({o.name, o.has_arg, nullptr, o.id});
  table.push_back({nullptr, 0, nullptr, 0});
  return table;
}

Result<ParsedArgs> parse_options(const std::vector<std::string>& args, const char* short_options,
                                 const std::vector<LongOption>& long_options) {
  std::vector<option> table = getopt_table(long_options);
  std::vector<std::string> words = {"slurm"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const int argc = static_cast<int>(words.size());
  // ':' first reports a missing argument apart from an unknown option; a leading '+' (stop at
  // the first word that is not an option) must stay in front of it.
  std::string optstring = short_options;
  optstring.insert(optstring.starts_with('+') ? 1 : 0, 1, ':');
  optind = 0;
  opterr = 0;
  ParsedArgs out;
  for (;;) {
    int index = -1;
    int id = getopt_long(argc, argv.data(), optstring.c_str(), table.data(), &index);
    if (id == -1) break;
    std::string word = optind > 0 && optind <= argc ? words[optind - 1] : "?";
    if (id == '?') {
      if (optopt != 0 && !word.starts_with("--")) {
        word.clear();  // built by pushes: GCC 12's -Wrestrict misreads assignments here
        word.push_back('-');
        word.push_back(static_cast<char>(optopt));
      }
      return fail("unrecognized option '" + word + "'");
    }
    if (id == ':') return fail("option '" + word + "' requires an argument");
    std::string written = index >= 0 ? "--" : "-";
    if (index >= 0)
      written += table[index].name;
    else
      written += static_cast<char>(id);
    out.options.push_back({id, optarg ? optarg : "", written});
  }
  for (int i = optind; i < argc; ++i) out.rest.push_back(words[i]);
  return out;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= text.size()) {
    size_t comma = text.find(',', from);
    std::string item(
        text.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from));
    if (!item.empty()) out.push_back(item);
    if (comma == std::string_view::npos) break;
    from = comma + 1;
  }
  return out;
}

}  // namespace trellis::cli::slurm
