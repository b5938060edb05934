#include "shell/pmix_server.h"

#include <dlfcn.h>
#include <linux/magic.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <pmix.h>
#include <pmix_server.h>

#include "shell/library_symbol.h"

namespace trellis {
namespace {

// Where the server's directory goes: libpmix keeps its job-data store there in files that every
// local rank maps, so a memory file system spares them the disk's page and inode work (on an
// ext4 /tmp it was a third of the shell's CPU). /dev/shm if it is a tmpfs we may write, else /tmp.
std::string server_directory_base() {
  struct statfs fs {};
  if (::statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC &&
      ::access("/dev/shm", W_OK | X_OK) == 0)
    return "/dev/shm";
  return "/tmp";
}

// A shell killed with SIGKILL (past the kill grace) leaves its directory behind, in memory when
// it is on /dev/shm. Each server's directory is named after its shell's pid
// ("trellis-pmix-12.0.n3.4711.Ab3xYz"), so a later shell of the same user removes those of
// shells that no longer run.
void remove_directories_of_dead_shells(const std::string& base) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(base, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("trellis-pmix-")) continue;
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
      continue;
    // The pid is the field before the random suffix.
    size_t suffix = name.rfind('.');
    if (suffix == std::string::npos || suffix == 0) continue;
    size_t pid_start = name.rfind('.', suffix - 1);
    if (pid_start == std::string::npos) continue;
    const std::string digits = name.substr(pid_start + 1, suffix - pid_start - 1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
        digits.size() > 9)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::filesystem::remove_all(entry.path(), error);
  }
}

// Where Debian's libpmix-dev puts the library (it is not on the loader's default path).
constexpr const char* kDebianLibrary = "/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2";

// The server of this process, for libpmix's upcalls (which carry no pointer of ours), and the
// fence waiting for the other nodes. Guarded by g_mutex.
std::mutex g_mutex;
PmixServer* g_server = nullptr;
struct PendingFence {
  pmix_modex_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
} g_fence;

pmix_status_t on_fence(const pmix_proc_t[], size_t, const pmix_info_t[], size_t, char* data,
                       size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  PmixServer* server = nullptr;
  {
    std::lock_guard lock(g_mutex);
    if (!g_server || g_fence.cbfunc) return PMIX_ERROR;  // one fence at a time
    g_fence = {cbfunc, cbdata};
    server = g_server;
  }
  PmixServer::Event event;
  event.kind = PmixServer::Event::Kind::kFence;
  if (data && ndata > 0) event.bytes.assign(data, ndata);
  server->post(std::move(event));
  return PMIX_SUCCESS;
}

pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char message[],
                       pmix_proc_t[], size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  PmixServer* server = nullptr;
  {
    std::lock_guard lock(g_mutex);
    server = g_server;
  }
  if (server) {
    PmixServer::Event event;
    event.kind = PmixServer::Event::Kind::kAbort;
    event.exit_code = status;
    event.reason = "rank " + std::to_string(proc ? proc->rank : 0) + " on " + server->node() +
                   " called PMIx_Abort (status " + std::to_string(status) + ")";
    if (message && *message) event.reason += ": " + std::string(message);
    server->post(std::move(event));
  }
  if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);  // lets the rank go on to exit
  return PMIX_SUCCESS;
}

pmix_status_t on_direct_modex(const pmix_proc_t*, const pmix_info_t[], size_t, pmix_modex_cbfunc_t,
                              void*) {
  return PMIX_ERR_NOT_SUPPORTED;  // fences always collect every node's data
}

void free_release(void* data) {
  std::free(data);
}

// A pmix_info_t filled by hand (the PMIX_INFO_LOAD macros call into libpmix).
struct InfoList {
  std::vector<pmix_info_t> items;
  std::vector<std::unique_ptr<std::string>> strings;  // kept alive for the calls
  void key(pmix_info_t& info, const char* k) {
    std::memset(&info, 0, sizeof info);
    std::strncpy(info.key, k, PMIX_MAX_KEYLEN);
  }
  void u32(const char* k, uint32_t v) {
    pmix_info_t& info = items.emplace_back();
    key(info, k);
    info.value.type = PMIX_UINT32;
    info.value.data.uint32 = v;
  }
  void rank(const char* k, pmix_rank_t v) {
    pmix_info_t& info = items.emplace_back();
    key(info, k);
    info.value.type = PMIX_PROC_RANK;
    info.value.data.rank = v;
  }
  void text(const char* k, std::string v) {
    strings.push_back(std::make_unique<std::string>(std::move(v)));
    pmix_info_t& info = items.emplace_back();
    key(info, k);
    info.value.type = PMIX_STRING;
    info.value.data.string = strings.back()->data();
  }
};

}  // namespace

// The libpmix entry points, from dlsym.
struct PmixServer::Library {
  void* handle = nullptr;
  decltype(&PMIx_server_init) server_init = nullptr;
  decltype(&PMIx_server_finalize) server_finalize = nullptr;
  decltype(&PMIx_generate_regex) generate_regex = nullptr;
  decltype(&PMIx_generate_ppn) generate_ppn = nullptr;
  decltype(&PMIx_server_register_nspace) register_nspace = nullptr;
  decltype(&PMIx_server_register_client) register_client = nullptr;
  decltype(&PMIx_server_setup_fork) setup_fork = nullptr;
  decltype(&PMIx_Error_string) error_string = nullptr;
  bool initialized = false;

  std::string error(pmix_status_t status) const {
    const char* text = error_string ? error_string(status) : nullptr;
    return text ? std::string(text) : "PMIx status " + std::to_string(status);
  }
};

Result<std::unique_ptr<PmixServer>> PmixServer::start(const ShellOptions& o,
                                                      const TaskLayout& layout) {
  std::unique_ptr<PmixServer> server(new PmixServer());
  server->lib_ = std::make_unique<Library>();
  Library& lib = *server->lib_;
  std::string tried;
  std::vector<std::string> paths;
  if (const char* chosen = std::getenv("TRELLIS_PMIX_LIBRARY")) paths.emplace_back(chosen);
  paths.emplace_back("libpmix.so.2");
  paths.emplace_back(kDebianLibrary);
  for (const std::string& path : paths) {
    lib.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib.handle) break;
    const char* why = ::dlerror();
    tried += "\n  " + path + ": " + (why ? why : "not found");
  }
  if (!lib.handle)
    return fail(
        Error::Code::kUnavailable,
        "--mpi pmix: cannot load libpmix (install libpmix2, or set TRELLIS_PMIX_LIBRARY):" + tried);
  auto load = [&](auto& function, const char* name) {
    return library_symbol(lib.handle, function, name);
  };
  if (!load(lib.server_init, "PMIx_server_init") ||
      !load(lib.server_finalize, "PMIx_server_finalize") ||
      !load(lib.generate_regex, "PMIx_generate_regex") ||
      !load(lib.generate_ppn, "PMIx_generate_ppn") ||
      !load(lib.register_nspace, "PMIx_server_register_nspace") ||
      !load(lib.register_client, "PMIx_server_register_client") ||
      !load(lib.setup_fork, "PMIx_server_setup_fork") ||
      !load(lib.error_string, "PMIx_Error_string"))
    return fail(Error::Code::kUnavailable,
                "--mpi pmix: the libpmix loaded lacks the server API (PMIx 4 is needed)");

  server->uid_ = ::getuid();
  server->gid_ = ::getgid();
  server->wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (server->wake_fd_ < 0) return fail(std::string("eventfd: ") + std::strerror(errno));
  const std::string base = server_directory_base();
  remove_directories_of_dead_shells(base);
  std::string name = base + "/trellis-pmix-" + step_name(o.job, o.step) + "." + o.node + "." +
                     std::to_string(::getpid()) + ".XXXXXX";
  if (!::mkdtemp(name.data()))
    return fail("--mpi pmix: cannot create a directory like " + name + ": " + std::strerror(errno));
  server->directory_ = name;
  server->node_ = o.node;
  server->nspace_ = "trellis." + std::to_string(o.job) + "." + std::to_string(o.attempt) + "." +
                    (o.step == kBatchStep ? std::string("batch") : std::to_string(o.step));

  {
    std::lock_guard lock(g_mutex);
    if (g_server) return fail(Error::Code::kInternal, "a PMIx server is running already");
    g_server = server.get();
    g_fence = {};
  }
  static pmix_server_module_t module;
  std::memset(&module, 0, sizeof module);
  module.fence_nb = on_fence;
  module.abort = on_abort;
  module.direct_modex = on_direct_modex;
  InfoList init;
  init.text(PMIX_SERVER_TMPDIR, server->directory_);
  init.rank(PMIX_SERVER_RANK, static_cast<pmix_rank_t>(o.node_index));
  init.text(PMIX_HOSTNAME, o.node);
  init.u32(PMIX_USERID, server->uid_);
  init.u32(PMIX_GRPID, server->gid_);
  if (pmix_status_t rc = lib.server_init(&module, init.items.data(), init.items.size());
      rc != PMIX_SUCCESS)
    return fail(Error::Code::kUnavailable, "PMIx_server_init: " + lib.error(rc));
  lib.initialized = true;

  // The maps: node names in step order, and each node's ranks ("0-1;2-3").
  std::string node_names, ranks_by_node, local_peers;
  for (size_t n = 0; n < o.nodes.size(); ++n) {
    if (n > 0) {
      node_names += ',';
      ranks_by_node += ';';
    }
    node_names += o.nodes[n];
    // Each rank written out: libpmix 4.2 reads "0-1" as rank 0 alone.
    std::vector<int> ranks = layout.ranks_on(static_cast<int>(n));
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (i > 0) ranks_by_node += ',';
      ranks_by_node += std::to_string(ranks[i]);
    }
  }
  std::vector<int> mine = layout.ranks_on(o.node_index);
  for (size_t i = 0; i < mine.size(); ++i) {
    if (i > 0) local_peers += ',';
    local_peers += std::to_string(mine[i]);
  }
  char* node_map = nullptr;
  char* proc_map = nullptr;
  if (pmix_status_t rc = lib.generate_regex(node_names.c_str(), &node_map); rc != PMIX_SUCCESS)
    return fail(Error::Code::kUnavailable, "PMIx_generate_regex: " + lib.error(rc));
  if (pmix_status_t rc = lib.generate_ppn(ranks_by_node.c_str(), &proc_map); rc != PMIX_SUCCESS) {
    std::free(node_map);
    return fail(Error::Code::kUnavailable, "PMIx_generate_ppn: " + lib.error(rc));
  }
  InfoList job;
  job.text(PMIX_NODE_MAP, node_map ? node_map : "");
  job.text(PMIX_PROC_MAP, proc_map ? proc_map : "");
  std::free(node_map);
  std::free(proc_map);
  job.text(PMIX_JOBID, std::to_string(o.job));
  job.u32(PMIX_UNIV_SIZE, static_cast<uint32_t>(layout.ntasks()));
  job.u32(PMIX_JOB_SIZE, static_cast<uint32_t>(layout.ntasks()));
  job.u32(PMIX_MAX_PROCS, static_cast<uint32_t>(layout.ntasks()));
  job.u32(PMIX_JOB_NUM_APPS, 1);
  job.u32(PMIX_NUM_NODES, static_cast<uint32_t>(o.nodes.size()));
  job.u32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(mine.size()));
  job.text(PMIX_LOCAL_PEERS, local_peers);
  if (!mine.empty()) job.rank(PMIX_LOCALLDR, static_cast<pmix_rank_t>(mine.front()));
  job.rank(PMIX_APPLDR, 0);
  job.u32(PMIX_APPNUM, 0);
  job.text(PMIX_TMPDIR, server->directory_);
  job.text(PMIX_NSDIR, server->directory_);
  if (pmix_status_t rc = lib.register_nspace(server->nspace_.c_str(), static_cast<int>(mine.size()),
                                             job.items.data(), job.items.size(), nullptr, nullptr);
      rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
    return fail(Error::Code::kUnavailable, "PMIx_server_register_nspace: " + lib.error(rc));
  return server;
}

std::vector<std::string> PmixServer::store_sizes(const std::vector<std::string>& base) {
  std::vector<std::string> sizes;
  for (std::string setting : {"NS_DATA_SEG_SIZE=1048576", "NS_META_SEG_SIZE=262144"}) {
    const std::string name = setting.substr(0, setting.find('=') + 1);
    if (std::none_of(base.begin(), base.end(),
                     [&](const std::string& e) { return e.starts_with(name); }))
      sizes.push_back(std::move(setting));
  }
  return sizes;
}

PmixServer::~PmixServer() {
  if (lib_ && lib_->initialized) lib_->server_finalize();
  {
    std::lock_guard lock(g_mutex);
    if (g_server == this) g_server = nullptr;
    g_fence = {};
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (!directory_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
  // libpmix stays mapped: its threads are gone, and unloading a library that registered
  // handlers with the C runtime is not safe.
}

Result<std::vector<std::string>> PmixServer::client_env(int rank) {
  pmix_proc_t proc;
  std::memset(&proc, 0, sizeof proc);
  std::strncpy(proc.nspace, nspace_.c_str(), PMIX_MAX_NSLEN);
  proc.rank = static_cast<pmix_rank_t>(rank);
  char** env = nullptr;
  if (pmix_status_t rc = lib_->setup_fork(&proc, &env); rc != PMIX_SUCCESS)
    return fail(Error::Code::kUnavailable,
                "PMIx_server_setup_fork (rank " + std::to_string(rank) + "): " + lib_->error(rc));
  std::vector<std::string> out;
  for (char** e = env; e && *e; ++e) {
    out.emplace_back(*e);
    std::free(*e);
  }
  std::free(env);
  if (pmix_status_t rc = lib_->register_client(&proc, uid_, gid_, nullptr, nullptr, nullptr);
      rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
    return fail(Error::Code::kUnavailable, "PMIx_server_register_client (rank " +
                                               std::to_string(rank) + "): " + lib_->error(rc));
  return out;
}

void PmixServer::post(Event event) {
  {
    std::lock_guard lock(g_mutex);
    events_.push_back(std::move(event));
  }
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

std::vector<PmixServer::Event> PmixServer::take_events() {
  uint64_t count = 0;
  (void)!::read(wake_fd_, &count, sizeof count);
  std::lock_guard lock(g_mutex);
  std::vector<Event> out = std::move(events_);
  events_.clear();
  return out;
}

void PmixServer::fence_done(const std::string& all) {
  PendingFence fence;
  {
    std::lock_guard lock(g_mutex);
    fence = g_fence;
    g_fence = {};
  }
  if (!fence.cbfunc) return;
  // libpmix keeps the data until it calls the release function.
  char* data = static_cast<char*>(std::malloc(all.empty() ? 1 : all.size()));
  if (!data) {
    fence.cbfunc(PMIX_ERROR, nullptr, 0, fence.cbdata, nullptr, nullptr);
    return;
  }
  std::memcpy(data, all.data(), all.size());
  fence.cbfunc(PMIX_SUCCESS, data, all.size(), fence.cbdata, free_release, data);
}

void PmixServer::fence_failed() {
  PendingFence fence;
  {
    std::lock_guard lock(g_mutex);
    fence = g_fence;
    g_fence = {};
  }
  if (fence.cbfunc) fence.cbfunc(PMIX_ERROR, nullptr, 0, fence.cbdata, nullptr, nullptr);
}

}  // namespace trellis
