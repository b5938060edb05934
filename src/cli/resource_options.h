// The options that say what a job asks of its nodes (cores, memory, GPUs, sharing, features), as
// `trellis submit` and `trellis run` take them by sbatch's names. Each one given is kept as
// (long name, value) in the order given, for core/resource_request.h's apply_resource_option,
// the one place their values are read (sbatch's own parser hands it the same pairs).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace trellis::cli {

using ResourceOptions = std::vector<std::pair<std::string, std::string>>;

// Adds -c, --mem, --mem-per-cpu, --mem-per-gpu, --gres, -G/--gpus, --gpus-per-node,
// --gpus-per-task, --cpus-per-gpu, -C/--constraint, --exclusive and -s/--oversubscribe to
// `command`; what is given goes to `into`, which must outlive the command's parsing. `when`
// starts each help text ("Outside a job: "; "" for none).
void add_resource_options(CLI::App& command, ResourceOptions& into, const std::string& when);

}  // namespace trellis::cli
