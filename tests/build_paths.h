// Where the build put the programs the tests run, and where the source tree is. They are defined
// in one file the build generates (build/PRESET/build_paths.cc, CMakeLists.txt), not on every test
// file's command line: a clone elsewhere then compiles every other test file exactly as this one
// did, so that a compiler cache kept outside the clones serves it.
#pragma once

#include <string>

namespace trellis::build_paths {

const std::string& source_dir();     // the source tree (data/, tests/golden/, deploy/)
const std::string& trellis();        // the trellis CLI (its dir holds slurm-bin/)
const std::string& trellisd();       // the controller
const std::string& agent();          // trellis-agent
const std::string& shell();          // trellis-shell
const std::string& work();           // trellis-work
const std::string& runtime_probe();  // trellis-runtime-probe (tests/daemon/runtime_probe.c)

}  // namespace trellis::build_paths

#define TRELLIS_SOURCE_DIR (::trellis::build_paths::source_dir())
#define TRELLIS_BINARY (::trellis::build_paths::trellis())
#define TRELLISD_BINARY (::trellis::build_paths::trellisd())
#define TRELLIS_AGENT_BINARY (::trellis::build_paths::agent())
#define TRELLIS_SHELL_BINARY (::trellis::build_paths::shell())
#define TRELLIS_WORK_BINARY (::trellis::build_paths::work())
#define TRELLIS_RUNTIME_PROBE_BINARY (::trellis::build_paths::runtime_probe())
