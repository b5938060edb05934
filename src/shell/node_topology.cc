#include "shell/node_topology.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <hwloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/write_all.h"
#include "shell/library_symbol.h"

namespace trellis {
namespace {

// This boot's id ("" if the kernel does not say): a new boot may have new hardware.
std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

// A file that this user owns, that no one else may write, and that is not a link.
bool trusted(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
            (st.st_mode & (S_IWGRP | S_IWOTH)) == 0 && st.st_size > 0;
  ::close(fd);
  return ok;
}

// hwloc's discovery of this machine, I/O devices included, as XML.
Result<std::string> discover_xml() {
  void* hwloc = ::dlopen("libhwloc.so.15", RTLD_NOW | RTLD_LOCAL);
  if (!hwloc) {
    const char* why = ::dlerror();
    return fail(Error::Code::kUnavailable,
                std::string("cannot load libhwloc.so.15: ") + (why ? why : "not found"));
  }
  auto load = [&](auto& function, const char* name) {
    return library_symbol(hwloc, function, name);
  };
  decltype(&hwloc_topology_init) init = nullptr;
  decltype(&hwloc_topology_set_io_types_filter) set_io_filter = nullptr;
  decltype(&hwloc_topology_load) load_topology = nullptr;
  decltype(&hwloc_topology_export_xmlbuffer) export_xml = nullptr;
  decltype(&hwloc_free_xmlbuffer) free_xml = nullptr;
  decltype(&hwloc_topology_destroy) destroy = nullptr;
  if (!load(init, "hwloc_topology_init") ||
      !load(set_io_filter, "hwloc_topology_set_io_types_filter") ||
      !load(load_topology, "hwloc_topology_load") ||
      !load(export_xml, "hwloc_topology_export_xmlbuffer") ||
      !load(free_xml, "hwloc_free_xmlbuffer") || !load(destroy, "hwloc_topology_destroy")) {
    ::dlclose(hwloc);
    return fail(Error::Code::kUnavailable, "libhwloc.so.15 lacks the hwloc 2 API");
  }
  hwloc_topology_t topology = nullptr;
  std::string xml;
  std::string failed;
  char* buffer = nullptr;
  int length = 0;
  if (init(&topology) != 0) {
    failed = "hwloc_topology_init";
  } else {
    set_io_filter(topology, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (load_topology(topology) != 0)
      failed = "hwloc_topology_load";
    else if (export_xml(topology, &buffer, &length, 0) != 0 || !buffer)
      failed = "hwloc_topology_export_xmlbuffer";
    else
      xml.assign(buffer, length > 0 ? static_cast<size_t>(length - 1) : 0);  // without its NUL
    if (buffer) free_xml(topology, buffer);
    destroy(topology);
  }
  ::dlclose(hwloc);
  if (!failed.empty()) return fail(Error::Code::kUnavailable, failed + ": " + std::strerror(errno));
  return xml;
}

}  // namespace

Result<std::string> node_topology_file(const std::string& directory) {
  const std::string path =
      directory + "/trellis-topology." + std::to_string(::geteuid()) + "." + boot_id() + ".xml";
  if (trusted(path)) return path;
  Result<std::string> xml = discover_xml();
  if (!xml) return xml.error();
  std::string temporary = path + ".XXXXXX";
  int fd = ::mkstemp(temporary.data());  // mode 0600
  if (fd < 0)
    return fail(Error::Code::kUnavailable,
                "cannot create " + temporary + ": " + std::strerror(errno));
  write_all(fd, *xml);
  bool written = ::lseek(fd, 0, SEEK_CUR) == static_cast<off_t>(xml->size());  // a full disk?
  bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(temporary.c_str());
    return fail(Error::Code::kUnavailable, "cannot write " + path + ": " + why);
  }
  return path;
}

}  // namespace trellis
