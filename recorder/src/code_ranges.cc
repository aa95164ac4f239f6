#include "code_ranges.h"

#include <dlfcn.h>
#include <link.h>

namespace gpucap::recorder {

std::vector<std::pair<const void*, const void*>> CodeRangesOf(const void* symbol) {
  struct Query {
    uintptr_t base = 0;
    std::vector<std::pair<const void*, const void*>> ranges;
  } q;
  Dl_info info;
  if (!symbol || !dladdr(symbol, &info)) return {};
  q.base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  dl_iterate_phdr(
      [](dl_phdr_info* i, size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        for (int k = 0; k < i->dlpi_phnum; ++k) {
          const ElfW(Phdr)& p = i->dlpi_phdr[k];
          if (p.p_type != PT_LOAD || !(p.p_flags & PF_X)) continue;
          uintptr_t b = i->dlpi_addr + p.p_vaddr;
          // The object whose mapping starts at dladdr's base.
          if (i->dlpi_addr != q->base && b != q->base) continue;
          q->ranges.emplace_back(reinterpret_cast<const void*>(b), reinterpret_cast<const void*>(b + p.p_memsz));
        }
        return 0;
      },
      &q);
  return q.ranges;
}

bool InCodeOf(const void* p, const void* symbol) {
  auto pc = reinterpret_cast<uintptr_t>(p);
  for (const auto& [b, e] : CodeRangesOf(symbol)) {
    if (pc >= reinterpret_cast<uintptr_t>(b) && pc < reinterpret_cast<uintptr_t>(e)) return true;
  }
  return false;
}

}  // namespace gpucap::recorder
