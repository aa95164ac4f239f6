// A kernel's base name, as Nsight Systems' `:base` name form shows it
// (its export's `shortName`, "Base kernel function name", next to
// `demangledName`, "Kernel function name w/ templates"): the function's own
// name, without its return type, its namespaces, its template arguments and
// its parameters.
//
//   "void at::native::vectorized_elementwise_kernel<4, F, A>(int, F, A)"
//       -> "vectorized_elementwise_kernel"
//   "void tiled_sum<128>(float const*, float*, int)" -> "tiled_sum"
//   "ncclDevKernel_AllReduce_Sum_f32_RING_LL" -> itself (not C++)
//
// A name the demangler cut short (ending in builder::kTruncatedMarker) has
// lost its end; its base name is read from what is left.
#ifndef GPUCAP_TOOLS_EXPORT_KERNEL_BASE_NAME_H_
#define GPUCAP_TOOLS_EXPORT_KERNEL_BASE_NAME_H_

#include <string_view>

namespace gpucap::tools::sqlite {

// A view into `demangled`.
std::string_view KernelBaseName(std::string_view demangled);

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_KERNEL_BASE_NAME_H_
