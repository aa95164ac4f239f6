#include "names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace gpucap::builder {

std::string Demangle(std::string_view mangled) {
  if (mangled.size() < 2 || mangled[0] != '_' || mangled[1] != 'Z') return std::string(mangled);
  std::string input(mangled);
  int status = 0;
  // __cxa_demangle reports failure through status; it only throws on
  // allocation failure, which we let end the program like any other.
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || out == nullptr) return input;
  return std::string(out.get());
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
