// sbatch: submits a batch script (a file, standard input, or --wrap) as `trellis submit` does,
// with sbatch's output: "Submitted batch job N" (--parsable: "N"). The submitting environment is
// exported (--export=ALL, sbatch's default).
#include <unistd.h>

#include <iostream>
#include <iterator>

#include "cli/slurm/slurm_command.h"
#include "cli/slurm/slurm_help.h"
#include "cli/submission.h"

namespace trellis::cli::slurm {
namespace {

constexpr const char* kNotAScript =
    "This does not look like a batch script. The first line must start with #! followed by the "
    "path to an interpreter.";

}  // namespace

int sbatch_main(const std::vector<std::string>& args) {
  static const CommandHelp help{"sbatch",
                                "[OPTIONS...] script [args...]",
                                sbatch_options(),
                                {.h_is_help = true, .options_end_at_command = true},
                                "With no script, the script is read from standard input. "
                                "#SBATCH lines of the script give options too (the command "
                                "line wins); #TRELLIS lines give Trellis's own."};
  if (std::optional<int> status = answer_help(args, help)) return *status;
  Result<SubmitOptions> options = parse_sbatch_args(args, /*command_allowed=*/true);
  if (!options) return report_error("sbatch", options.error());
  // As sbatch: with no script named, the script is read from standard input (kept in a file
  // for as long as it takes to read it).
  std::string stdin_copy;
  if (!options->wrap && options->command.empty()) {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    if (!text.starts_with("#!")) return report_error("sbatch", fail(kNotAScript));
    char path[] = "/tmp/sbatch-stdin-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      return report_error("sbatch", fail(Error::Code::kUnavailable,
                                         "cannot keep the script read from standard input"));
    close(fd);
    stdin_copy = path;
    options->command = {stdin_copy};
  } else if (!options->wrap && access(options->command.front().c_str(), R_OK) != 0) {
    return report_error("sbatch", fail("Unable to open file " + options->command.front()));
  }
  SubmitOptions effective;
  Result<v1::JobSpec> spec = build_job_spec(*options, ExportDefault::kAll, &effective);
  if (!stdin_copy.empty()) {
    unlink(stdin_copy.c_str());
    if (spec) {
      spec->set_argv(0, "(stdin)");
      if (!effective.name) spec->set_name("sbatch");
    }
  }
  if (!spec) return report_error("sbatch", spec.error());
  if (spec->script().empty()) return report_error("sbatch", fail(kNotAScript));
  Result<v1::SubmitReply> reply = send_submission("", *spec);
  if (!reply) {
    std::cerr << "sbatch: error: Batch job submission failed: " << reply.error().message << "\n";
    return reply.error().code == Error::Code::kInvalidArgument ? 2 : 1;
  }
  if (effective.parsable.value_or(false))
    std::cout << reply->job_id() << "\n";
  else
    std::cout << "Submitted batch job " << reply->job_id() << "\n";
  std::cout.flush();
  if (!effective.wait.value_or(false)) return 0;
  return wait_for_job("", reply->job_id(), "sbatch");
}

}  // namespace trellis::cli::slurm
