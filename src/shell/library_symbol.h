// library_symbol: sets a function pointer to a symbol of a library opened with dlopen, typed as
// the pointer is (the libraries the job shell loads only when a step needs them: libpmix,
// libhwloc). False when the library has no such symbol.
//
//   decltype(&hwloc_topology_init) init = nullptr;
//   if (!library_symbol(handle, init, "hwloc_topology_init")) ...
#pragma once

#include <dlfcn.h>

namespace trellis {

template <class Function>
bool library_symbol(void* handle, Function*& function, const char* name) {
  function = reinterpret_cast<Function*>(::dlsym(handle, name));
  return function != nullptr;
}

}  // namespace trellis
