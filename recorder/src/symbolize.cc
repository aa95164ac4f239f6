#include "symbolize.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace gpucap::recorder {
namespace {

// Looks `offset` (from the object's load base) up in the .symtab of the ELF
// file at `path`. Every read is bounds-checked: the file may not be what the
// process mapped (replaced on disk), and must never crash the process.
std::string FromSymtab(const char* path, uint64_t offset) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    close(fd);
    return {};
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return {};
  const auto* base = static_cast<const uint8_t*>(map);
  std::string result;
  auto in = [&](uint64_t off, uint64_t len) { return off <= size && len <= size - off; };
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(base);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
      eh->e_shentsize == sizeof(Elf64_Shdr) && in(eh->e_shoff, uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr))) {
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(base + eh->e_shoff);
    uint64_t want = offset;
    for (unsigned i = 0; i < eh->e_shnum && result.empty(); ++i) {
      if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
      const Elf64_Shdr& strtab = sh[sh[i].sh_link];
      if (!in(sh[i].sh_offset, sh[i].sh_size) || !in(strtab.sh_offset, strtab.sh_size)) continue;
      const auto* syms = reinterpret_cast<const Elf64_Sym*>(base + sh[i].sh_offset);
      size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
      for (size_t k = 0; k < count; ++k) {
        const Elf64_Sym& s = syms[k];
        if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_value == 0) continue;
        if (want >= s.st_value && want < s.st_value + (s.st_size ? s.st_size : 1) &&
            s.st_name < strtab.sh_size) {
          const char* name = reinterpret_cast<const char*>(base + strtab.sh_offset + s.st_name);
          result.assign(name, strnlen(name, strtab.sh_size - s.st_name));
          break;
        }
      }
    }
  }
  munmap(map, size);
  return result;
}

}  // namespace

std::string SymbolFor(uint64_t address) {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(address), &info)) return {};
  if (info.dli_sname && info.dli_saddr == reinterpret_cast<void*>(address)) return info.dli_sname;
  if (!info.dli_fname || !*info.dli_fname) return info.dli_sname ? info.dli_sname : "";
  // The main program reports an empty name; /proc/self/exe is its file.
  const char* path = info.dli_fname;
  std::string exe;
  if (access(path, R_OK) != 0) {
    exe = "/proc/self/exe";
    path = exe.c_str();
  }
  auto load_base = reinterpret_cast<uint64_t>(info.dli_fbase);
  std::string name = FromSymtab(path, address - load_base);
  if (name.empty()) name = FromSymtab(path, address);  // non-PIE: absolute addresses
  if (name.empty() && info.dli_sname) name = info.dli_sname;
  return name;
}

}  // namespace gpucap::recorder
