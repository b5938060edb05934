#include "daemon/program_libraries.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <optional>

namespace trellis {
namespace {

// Bounds on what a hostile or broken file can make this read.
constexpr size_t kMaxProgramHeaders = 4096;
constexpr size_t kMaxDynamicEntries = 1 << 16;
constexpr size_t kMaxStringTable = 16 << 20;

class File {
 public:
  explicit File(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  bool open() const { return fd_ >= 0; }
  // Exactly `size` bytes at `offset`, or false.
  bool read(uint64_t offset, void* data, size_t size) const {
    char* at = static_cast<char*>(data);
    while (size > 0) {
      ssize_t got = ::pread(fd_, at, size, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      at += got;
      offset += static_cast<uint64_t>(got);
      size -= static_cast<size_t>(got);
    }
    return true;
  }

 private:
  int fd_;
};

bool native_elf(const ElfW(Ehdr) & header) {
  const unsigned char word = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
  const unsigned char order =
      std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;
  return std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 && header.e_ident[EI_CLASS] == word &&
         header.e_ident[EI_DATA] == order && header.e_phentsize == sizeof(ElfW(Phdr));
}

// The file offset of virtual address `address`, through the loadable segments.
std::optional<uint64_t> file_offset(const std::vector<ElfW(Phdr)>& segments, uint64_t address) {
  for (const ElfW(Phdr) & s : segments)
    if (s.p_type == PT_LOAD && address >= s.p_vaddr && address - s.p_vaddr < s.p_filesz)
      return s.p_offset + (address - s.p_vaddr);
  return std::nullopt;
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

Result<std::vector<std::string>> needed_libraries(const std::string& path) {
  File file(path);
  if (!file.open()) return fail(path + ": " + std::strerror(errno));
  ElfW(Ehdr) header{};
  if (!file.read(0, &header, sizeof header) || !native_elf(header))
    return fail(path + ": not an ELF program of this machine");
  if (header.e_phnum > kMaxProgramHeaders)
    return fail(path + ": " + std::to_string(header.e_phnum) + " program headers");
  std::vector<ElfW(Phdr)> segments(header.e_phnum);
  if (!segments.empty() &&
      !file.read(header.e_phoff, segments.data(), segments.size() * sizeof(ElfW(Phdr))))
    return fail(path + ": its program headers are cut short");
  const ElfW(Phdr)* dynamic = nullptr;
  for (const ElfW(Phdr) & s : segments)
    if (s.p_type == PT_DYNAMIC) dynamic = &s;
  if (dynamic == nullptr) return std::vector<std::string>{};  // static: needs nothing
  const size_t entries =
      std::min<size_t>(dynamic->p_filesz / sizeof(ElfW(Dyn)), kMaxDynamicEntries);
  std::vector<ElfW(Dyn)> table(entries);
  if (!table.empty() && !file.read(dynamic->p_offset, table.data(), entries * sizeof(ElfW(Dyn))))
    return fail(path + ": its dynamic section is cut short");
  uint64_t strings_at = 0, strings_size = 0;
  bool have_strings = false;
  std::vector<uint64_t> needed;
  for (const ElfW(Dyn) & entry : table) {
    if (entry.d_tag == DT_NULL) break;
    if (entry.d_tag == DT_NEEDED) needed.push_back(entry.d_un.d_val);
    if (entry.d_tag == DT_STRTAB) strings_at = entry.d_un.d_ptr, have_strings = true;
    if (entry.d_tag == DT_STRSZ) strings_size = entry.d_un.d_val;
  }
  if (needed.empty()) return std::vector<std::string>{};
  std::optional<uint64_t> offset = have_strings ? file_offset(segments, strings_at) : std::nullopt;
  if (!offset || strings_size == 0 || strings_size > kMaxStringTable)
    return fail(path + ": its dynamic string table cannot be found");
  std::string strings(strings_size, '\0');
  if (!file.read(*offset, strings.data(), strings.size()))
    return fail(path + ": its dynamic string table is cut short");
  std::vector<std::string> names;
  for (uint64_t at : needed) {
    if (at >= strings.size()) return fail(path + ": a needed library's name is outside its table");
    names.emplace_back(strings.c_str() + at, strnlen(strings.c_str() + at, strings.size() - at));
  }
  return names;
}

ProgramMpi mpi_of_library(std::string_view soname) {
  // Open MPI: libmpi.so.40 (4.x and 5.x), its C++/Fortran bindings and runtime layers.
  if (starts_with(soname, "libmpi.so.40") || starts_with(soname, "libopen-rte.so") ||
      starts_with(soname, "libopen-pal.so") || starts_with(soname, "libmpi_cxx.so.40") ||
      starts_with(soname, "libmpi_mpifh.so.40") || starts_with(soname, "libmpi_usempif08.so.40"))
    return ProgramMpi::kOpenMpi;
  // MPICH and its ABI family (MVAPICH, Intel MPI: libmpi.so.12), and their Fortran/C++ layers.
  if (starts_with(soname, "libmpich") || starts_with(soname, "libmpi.so.12") ||
      starts_with(soname, "libmpicxx.so.12") || starts_with(soname, "libmpifort.so.12"))
    return ProgramMpi::kMpich;
  return ProgramMpi::kNone;
}

ProgramMpi program_mpi(const std::string& path) {
  Result<std::vector<std::string>> libraries = needed_libraries(path);
  if (!libraries) return ProgramMpi::kUnknown;
  for (const std::string& library : *libraries)
    if (ProgramMpi kind = mpi_of_library(library); kind != ProgramMpi::kNone) return kind;
  return ProgramMpi::kNone;
}

Result<std::string> find_program(const std::string& command, std::string_view path,
                                 const std::string& cwd) {
  auto runnable = [](const std::string& file) {
    struct stat info {};
    return ::stat(file.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           (info.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) != 0;
  };
  auto under_cwd = [&](const std::string& file) {
    return file.empty() || file[0] == '/' || cwd.empty() ? file : cwd + "/" + file;
  };
  if (command.empty()) return fail("an empty command");
  if (command.find('/') != std::string::npos) {
    std::string file = under_cwd(command);
    if (runnable(file)) return file;
    return fail("'" + command + "': no such program");
  }
  size_t start = 0;
  for (;;) {
    size_t end = path.find(':', start);
    std::string_view dir = path.substr(start, end == std::string_view::npos ? end : end - start);
    std::string file = under_cwd((dir.empty() ? "." : std::string(dir)) + "/" + command);
    if (runnable(file)) return file;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return fail("'" + command + "': not found in PATH");
}

}  // namespace trellis
