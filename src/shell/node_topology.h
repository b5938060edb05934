// The node's hardware topology as hwloc XML, discovered once per boot (and user) and kept in a
// file, so that the job shells of MPI steps on the host can point their PMIx server and their
// ranks at it (HWLOC_XMLFILE, HWLOC_THISSYSTEM=1) instead of each discovering it again.
//
// Why: libpmix's PMIx_server_init, and every Open MPI or MPICH rank in its MPI_Init, runs hwloc's
// discovery, which reads sysfs and the PCI devices' config space: 12-20 ms of CPU per process on
// this project's test host (about 1 ms per PCI config read in a VM). mpirun and mpiexec pay it
// once per node (their daemon discovers and hands the topology to its ranks); a shell per step and
// node that let every process discover paid it (ranks + 1) times per node. Loading the XML takes
// 2-3 ms. I/O devices are kept in the file (all of them), so a consumer that asks for them
// (Open MPI keeps the "important" ones) finds what its own discovery would have found.
//
// The file is /tmp/trellis-topology.<uid>.<boot id>.xml: one per user (a job shell runs as its
// job's user) and per boot (hardware changes with a reboot). A file found there is used only if
// it is a regular file of this user that nobody else may write; otherwise, or if it is missing,
// the topology is discovered (libhwloc, loaded with dlopen, so that a shell that serves no MPI
// step never maps it) and written to a temporary file that is renamed into place, so that a
// shell never reads a half-written file. Two shells that discover at once each write a whole
// file; the last rename wins.
#pragma once

#include <string>

#include "core/result.h"

namespace trellis {

// hwloc's plugins, none of which takes part in reading a topology from XML (the file is read by
// hwloc's built-in parser): what the shell sets HWLOC_PLUGINS_BLACKLIST to beside HWLOC_XMLFILE.
inline constexpr const char* kUnusedHwlocPlugins =
    "hwloc_xml_libxml,hwloc_pci,hwloc_opencl,hwloc_gl";

// The path of this node's topology file in `directory` (tests give their own), discovering and
// writing it first if needed. An error (no libhwloc, the directory not writable, a file of
// another user in the way) names what failed: the caller then lets each process discover on its
// own, as without the cache.
Result<std::string> node_topology_file(const std::string& directory = "/tmp");

}  // namespace trellis
