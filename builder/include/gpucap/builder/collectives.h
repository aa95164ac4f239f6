// NCCL collectives as their NVTX ranges describe them. NCCL (2.19 on) opens a
// range per API call in its "NCCL" domain with an extended payload: a struct
// whose layout it registers once as a payload schema (communicator id,
// "Message size [bytes]", reduction op, root or peer); its init ranges put
// {communicator id, "No. of ranks", "Rank", "CUDA device"} on their pops. The
// payload holds no dtype and no element count: a kernel's dtype comes from
// its name (NCCL's kernels are typed), and the element count from the size
// and the dtype. Built once per capture; the join asks per kernel.
#ifndef GPUCAP_BUILDER_COLLECTIVES_H_
#define GPUCAP_BUILDER_COLLECTIVES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "gpucap/format/capture.h"

namespace gpucap::builder {

struct Collective {
  std::string name;      // "all_reduce" for ncclAllReduce
  uint64_t comm = 0;     // NCCL's communicator id (hash)
  uint64_t bytes = 0;    // the payload's message size
  int64_t group_size = -1;  // ranks of the communicator; -1: no init seen
  // The capture().ranges event whose payload gave group_size (an init
  // range's pop); UINT32_MAX when none did.
  uint32_t group_size_event = UINT32_MAX;
};

class CollectiveIndex {
 public:
  explicit CollectiveIndex(const format::Capture& capture);

  bool empty() const { return by_event_.empty(); }
  // The collective whose range opened with capture().ranges[event]; null
  // when that range carries no collective payload.
  const Collective* AtEvent(uint32_t event) const {
    auto it = by_event_.find(event);
    return it == by_event_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<uint32_t, Collective> by_event_;
};

// A PyTorch dtype name ("Float", "BFloat16", as torch's profiler writes
// them) and its size, read off an NCCL kernel's name, mangled or not:
// ncclDevKernel_AllReduce_Sum_f32_RING_LL, oneRankReduce<FuncPreMulSum<float>>.
// {"", 0} when the name says none.
struct KernelDtype {
  std::string_view name;
  uint32_t size = 0;
};
KernelDtype DtypeFromKernelName(std::string_view kernel);

// "ncclAllReduce" -> "all_reduce", "ncclReduceScatter" -> "reduce_scatter".
std::string CollectiveName(std::string_view nccl_function);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_COLLECTIVES_H_
