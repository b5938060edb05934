// What a job's program needs from its job shell, read from the program's own file before it runs:
// the agent decides from it whether a step needs a job shell at all, and which PMI the shell
// serves when the job did not say (`--mpi` unset).
//
// An ELF executable names the shared libraries it needs (DT_NEEDED); an MPI program names its MPI
// library there: Open MPI's `libmpi.so.40` (whose direct launch needs a PMIx server), MPICH's
// `libmpich.so.12` or `libmpi.so.12` (PMI-1). Only the program's own list is read, not its
// libraries' lists: MPI programs name their MPI library themselves, and a program that reaches MPI
// only through another library (a Python interpreter importing mpi4py) is not seen.
//
//   Result<std::string> path = find_program("a.out", "/usr/bin:/bin", "/home/alice");
//   ProgramMpi mpi = path ? program_mpi(*path) : ProgramMpi::kUnknown;
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trellis {

// The libraries an ELF file names as needed (DT_NEEDED), in its order; empty for a static
// program. An error (naming the file) when it cannot be read or is not an ELF file of this
// machine's word size and byte order (a script, a text file).
Result<std::vector<std::string>> needed_libraries(const std::string& path);

// Which MPI a program is built with, from needed_libraries().
enum class ProgramMpi {
  kNone,     // an ELF program that names no MPI library (true, hostname, sh, python3)
  kMpich,    // MPICH (and MVAPICH, Intel MPI: libmpi.so.12): PMI-1
  kOpenMpi,  // Open MPI (libmpi.so.40, libopen-rte, libopen-pal): PMIx
  kUnknown,  // not an ELF file (a script) or unreadable: anything may be inside
};
ProgramMpi program_mpi(const std::string& path);
// The kind for one library name (a DT_NEEDED entry); kNone for a library of no MPI.
ProgramMpi mpi_of_library(std::string_view soname);

// The file exec would run for `command`: itself when it holds a '/' (relative to `cwd`), else the
// first executable regular file named so in a directory of `path` (a ':' list, an empty entry
// being `cwd`), as execvp looks. An error naming the command when there is none.
Result<std::string> find_program(const std::string& command, std::string_view path,
                                 const std::string& cwd);

}  // namespace trellis
