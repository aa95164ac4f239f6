// The `:base` name form (nsys's shortName, "Base kernel function name"):
// the function's own name, without return type, namespaces, template
// arguments or parameters. nsys's cuda_gpu_kern_sum:base shows CUTLASS's
// `void cutlass::Kernel2<cutlass_80_...>(T1::Params)` as `Kernel2`.
#include <gtest/gtest.h>

#include <string>

#include "gpucap/builder/budgets.h"
#include "gpucap/tools/export/kernel_base_name.h"

namespace gpucap::tools::sqlite {
namespace {

TEST(KernelBaseName, DropsReturnTypeNamespacesTemplatesAndParameters) {
  EXPECT_EQ(KernelBaseName("void tiled_sum<128>(float const*, float*, int)"), "tiled_sum");
  EXPECT_EQ(KernelBaseName("void scale(float*, float, int)"), "scale");
  EXPECT_EQ(KernelBaseName("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4>"
                           "(cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4::Params)"),
            "Kernel2");
  EXPECT_EQ(KernelBaseName("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                           "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"),
            "vectorized_elementwise_kernel");
  // A lambda in the template arguments: its "(int)" and "::" are nested.
  EXPECT_EQ(KernelBaseName("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::"
                           "AddFunctor<float> >(at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::"
                           "{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::AddFunctor<float> >("
                           "at::TensorIteratorBase&, at::native::AddFunctor<float> const&)::{lambda(int)#1})"),
            "elementwise_kernel");
  EXPECT_EQ(KernelBaseName("void (anonymous namespace)::softmax_warp_forward<float, float, float, 7, false>"
                           "(float*, float const*, int, int, int)"),
            "softmax_warp_forward");
  // A return type with a space and template arguments of its own.
  EXPECT_EQ(KernelBaseName("std::pair<int, int> ns::pick<2>(int)"), "pick");
  EXPECT_EQ(KernelBaseName("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  EXPECT_EQ(KernelBaseName("triton_poi_fused_add_0"), "triton_poi_fused_add_0");
}

TEST(KernelBaseName, ReadsWhatATruncatedNameKept) {
  std::string cut_in_templates = "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int";
  cut_in_templates += builder::kTruncatedMarker;
  EXPECT_EQ(KernelBaseName(cut_in_templates), "device_kernel");
  std::string cut_in_parameters = "void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float, at::nat";
  cut_in_parameters += builder::kTruncatedMarker;
  EXPECT_EQ(KernelBaseName(cut_in_parameters), "reduce_kernel");
  std::string cut_after_name = "void (anonymous namespace)::ker";
  cut_after_name += builder::kTruncatedMarker;
  EXPECT_EQ(KernelBaseName(cut_after_name), "ker");
}

}  // namespace
}  // namespace gpucap::tools::sqlite
