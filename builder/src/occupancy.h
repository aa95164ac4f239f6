// Kineto's kernel statistics: blocks and warps per SM and the estimated
// achieved occupancy, computed from the device's properties the way the CUDA
// occupancy calculator limits resident blocks (warps, registers, shared
// memory, blocks per SM), without the CUDA toolkit.
#ifndef GPUCAP_BUILDER_SRC_OCCUPANCY_H_
#define GPUCAP_BUILDER_SRC_OCCUPANCY_H_

#include <cstdint>

#include "gpucap/format/model.h"

namespace gpucap::builder {

struct KernelShape {
  int64_t grid_x, grid_y, grid_z;
  int64_t block_x, block_y, block_z;
  uint32_t registers_per_thread;
  int64_t static_shared_memory, dynamic_shared_memory;
};

double BlocksPerSm(const format::DeviceInfo& d, const KernelShape& k);
double WarpsPerSm(const format::DeviceInfo& d, const KernelShape& k);
// Blocks the resources let reside on one SM at once; 0 when the kernel
// cannot fit or the properties are unknown.
int MaxActiveBlocksPerSm(const format::DeviceInfo& d, const KernelShape& k);
// Kineto's "est. achieved occupancy %": min(blocks per SM, resident blocks)
// x threads per block / max threads per SM, as a rounded percentage; -99
// when the device is unknown (Kineto rounds its -1.0 the same way).
int EstimatedOccupancyPercent(const format::DeviceInfo& d, const KernelShape& k);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_SRC_OCCUPANCY_H_
