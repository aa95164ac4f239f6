#include "names.h"

#include <libiberty/demangle.h>

#include <csetjmp>
#include <string>

#include "gpucap/builder/budgets.h"

namespace gpucap::builder {
namespace {

// The demangler prints through a callback, a piece at a time. A name whose
// substitutions nest doubles its output per level (260 mangled bytes can
// print gigabytes), so printing stops at the budget: the callback jumps back
// out of the demangler, which keeps all its state on the stack (that is
// what the callback interface is for), so nothing is leaked.
struct Printer {
  std::string out;
  bool cut = false;
  std::jmp_buf stop;
};

extern "C" void AppendPiece(const char* s, size_t n, void* opaque) {
  auto* p = static_cast<Printer*>(opaque);
  size_t room = kMaxNameBytes - p->out.size();
  if (n > room) {
    p->out.append(s, room);
    p->cut = true;
    std::longjmp(p->stop, 1);
  }
  p->out.append(s, n);
}

}  // namespace

std::string_view TruncateName(std::string_view name, std::string* storage) {
  if (name.size() <= kMaxNameBytes) return name;
  storage->assign(name.substr(0, kMaxNameBytes));
  storage->append(kTruncatedMarker);
  return *storage;
}

std::string_view TruncateName(std::string_view name, std::deque<std::string>* cut) {
  return name.size() <= kMaxNameBytes ? name : TruncateName(name, &cut->emplace_back());
}

std::string Demangle(std::string_view mangled) {
  std::string cut;
  // A name that is not mangled is cut too: every output shows it (issue 41).
  if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') return std::string(TruncateName(mangled, &cut));
  std::string input(mangled);
  if (input.size() > kMaxMangledBytes) return std::string(TruncateName(input, &cut));
  Printer p;
  p.out.reserve(256);
  // DMGL_PARAMS | DMGL_TYPES: what abi::__cxa_demangle prints.
  if (setjmp(p.stop) == 0) {
    if (!cplus_demangle_v3_callback(input.c_str(), DMGL_PARAMS | DMGL_TYPES, AppendPiece, &p)) {
      return std::string(TruncateName(input, &cut));
    }
  }
  if (p.cut) p.out.append(kTruncatedMarker);
  return p.out;
}

std::string_view MemcpyKindName(uint32_t kind) {
  switch (kind) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 3: return "HtoA";
    case 4: return "AtoH";
    case 5: return "AtoA";
    case 6: return "AtoD";
    case 7: return "DtoA";
    case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "PtoP";
    default: return "<unknown>";
  }
}

std::string_view MemoryKindName(uint32_t kind) {
  switch (kind) {
    case 0: return "Unknown";
    case 1: return "Pageable";
    case 2: return "Pinned";
    case 3: return "Device";
    case 4: return "Array";
    case 5: return "Managed";
    case 6: return "Device Static";
    case 7: return "Managed Static";
    default: return "Unrecognized";
  }
}

std::string_view OverheadKindName(uint32_t kind) {
  switch (kind) {
    case 0: return "Unknown";
    case 1: return "Driver Compiler";
    case 1u << 16: return "Buffer Flush";
    case 2u << 16: return "Instrumentation";
    case 3u << 16: return "Resource";
    case 4u << 16: return "Runtime Triggered Module Loading";
    case 5u << 16: return "Lazy Function Loading";
    case 6u << 16: return "Command Buffer Full";
    case 7u << 16: return "Activity Buffer Request";
    case 8u << 16: return "UVM Activity Init";
    default: return "Unrecognized";
  }
}

std::string_view SyncTypeName(uint32_t type) {
  switch (type) {
    case 1: return "Event Sync";
    case 2: return "Stream Wait Event";
    case 3: return "Stream Sync";
    case 4: return "Context Sync";
    default: return "Unknown";
  }
}

std::string MemcpyName(uint32_t copy_kind, uint32_t src_kind, uint32_t dst_kind) {
  std::string s = "Memcpy ";
  s += MemcpyKindName(copy_kind);
  s += " (";
  s += MemoryKindName(src_kind);
  s += " -> ";
  s += MemoryKindName(dst_kind);
  s += ")";
  return s;
}

std::string MemsetName(uint32_t memory_kind) {
  return "Memset (" + std::string(MemoryKindName(memory_kind)) + ")";
}

}  // namespace gpucap::builder
