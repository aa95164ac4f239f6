// The names Kineto gives CUPTI's enums, and kernel name demangling.
#ifndef GPUCAP_BUILDER_SRC_NAMES_H_
#define GPUCAP_BUILDER_SRC_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace gpucap::builder {

// The demangled name as abi::__cxa_demangle prints it, cut at kMaxNameBytes
// (budgets.h) with a marker; or the name as given when it is not a mangled
// C++ name (CUDA C kernels, cuBLAS' sm90_xmma_... names), is too long to
// demangle, or does not demangle, cut the same way (TruncateName).
std::string Demangle(std::string_view mangled);

std::string_view MemcpyKindName(uint32_t kind);  // "HtoD", "DtoD", ...
std::string_view MemoryKindName(uint32_t kind);  // "Device", "Pinned", ...
std::string_view OverheadKindName(uint32_t kind);
std::string_view SyncTypeName(uint32_t type);    // "Stream Sync", ...

// "Memcpy DtoD (Device -> Device)", "Memset (Device)".
std::string MemcpyName(uint32_t copy_kind, uint32_t src_kind, uint32_t dst_kind);
std::string MemsetName(uint32_t memory_kind);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_NAMES_H_
