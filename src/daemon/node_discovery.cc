#include "daemon/node_discovery.h"

#include <dlfcn.h>
#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "shell/library_symbol.h"

namespace trellis {

Result<NodeInventory> discover_node(const DiscoveryOptions& options) {
  void* hwloc = ::dlopen("libhwloc.so.15", RTLD_NOW | RTLD_LOCAL);
  if (!hwloc) {
    const char* why = ::dlerror();
    return fail(Error::Code::kUnavailable,
                std::string("cannot load libhwloc.so.15: ") + (why ? why : "not found"));
  }
  decltype(&hwloc_topology_init) init = nullptr;
  decltype(&hwloc_topology_set_synthetic) set_synthetic = nullptr;
  decltype(&hwloc_topology_set_xml) set_xml = nullptr;
  decltype(&hwloc_topology_set_io_types_filter) set_io_filter = nullptr;
  decltype(&hwloc_topology_load) load = nullptr;
  decltype(&hwloc_topology_destroy) destroy = nullptr;
  decltype(&hwloc_get_type_depth) type_depth = nullptr;
  decltype(&hwloc_get_nbobjs_by_depth) count_at = nullptr;
  decltype(&hwloc_get_obj_by_depth) object_at = nullptr;
  if (!library_symbol(hwloc, init, "hwloc_topology_init") ||
      !library_symbol(hwloc, set_synthetic, "hwloc_topology_set_synthetic") ||
      !library_symbol(hwloc, set_xml, "hwloc_topology_set_xml") ||
      !library_symbol(hwloc, set_io_filter, "hwloc_topology_set_io_types_filter") ||
      !library_symbol(hwloc, load, "hwloc_topology_load") ||
      !library_symbol(hwloc, destroy, "hwloc_topology_destroy") ||
      !library_symbol(hwloc, type_depth, "hwloc_get_type_depth") ||
      !library_symbol(hwloc, count_at, "hwloc_get_nbobjs_by_depth") ||
      !library_symbol(hwloc, object_at, "hwloc_get_obj_by_depth")) {
    ::dlclose(hwloc);
    return fail(Error::Code::kUnavailable, "libhwloc.so.15 lacks a function of hwloc 2's API");
  }
  hwloc_topology_t topology = nullptr;
  if (init(&topology) != 0) {
    ::dlclose(hwloc);
    return fail(Error::Code::kUnavailable, "hwloc_topology_init failed");
  }
  std::string failed;
  if (!options.synthetic.empty() && set_synthetic(topology, options.synthetic.c_str()) != 0)
    failed = "hwloc_topology_set_synthetic '" + options.synthetic + "': " + std::strerror(errno);
  else if (!options.xml_file.empty() && set_xml(topology, options.xml_file.c_str()) != 0)
    failed = "hwloc_topology_set_xml " + options.xml_file + ": " + std::strerror(errno);
  else if (set_io_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0)
    failed = "hwloc_topology_set_io_types_filter";
  else if (load(topology) != 0)
    failed = std::string("hwloc_topology_load: ") + std::strerror(errno);
  NodeInventory node;
  if (failed.empty()) {
    auto count = [&](hwloc_obj_type_t type) {
      int depth = type_depth(topology, type);
      return depth == HWLOC_TYPE_DEPTH_UNKNOWN || depth == HWLOC_TYPE_DEPTH_MULTIPLE
                 ? 0
                 : static_cast<int>(count_at(topology, depth));
    };
    const int sockets = std::max(1, count(HWLOC_OBJ_PACKAGE));
    const int cores = std::max(1, count(HWLOC_OBJ_CORE));
    const int threads = std::max(1, count(HWLOC_OBJ_PU));
    node.sockets = sockets;
    // A machine whose cores do not split evenly over its packages (it happens with offline
    // cores) is counted as one socket, so that the inventory stays one a config could state.
    if (cores % sockets != 0) node.sockets = 1;
    node.cores_per_socket = cores / node.sockets;
    node.threads_per_core = std::max(1, threads / cores);
    node.numa_nodes = std::max(1, std::min(cores, count(HWLOC_OBJ_NUMANODE)));
    hwloc_obj_t root = object_at(topology, 0, 0);
    node.memory_mb = root ? static_cast<int64_t>(root->total_memory >> 20) : 0;
    const int os_devices = static_cast<int>(count_at(topology, HWLOC_TYPE_DEPTH_OS_DEVICE));
    for (int i = 0; i < os_devices; ++i) {
      hwloc_obj_t device =
          object_at(topology, HWLOC_TYPE_DEPTH_OS_DEVICE, static_cast<unsigned>(i));
      if (!device || !device->name || device->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU) continue;
      const std::string name = device->name;
      if (name.rfind("nvidia", 0) != 0 && name.rfind("card", 0) != 0) continue;
      node.gpus.push_back(
          {"", "", "/dev/" + (name.rfind("card", 0) == 0 ? "dri/" + name : name), 0});
    }
  }
  destroy(topology);
  ::dlclose(hwloc);
  if (!failed.empty()) return fail(Error::Code::kUnavailable, failed);
  return node;
}

}  // namespace trellis
