#include "occupancy.h"

#include <algorithm>

namespace gpucap::builder {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

int64_t Blocks(const KernelShape& k) { return k.grid_x * k.grid_y * k.grid_z; }
int64_t Threads(const KernelShape& k) { return k.block_x * k.block_y * k.block_z; }

// Resident blocks per SM allowed by the architecture alone.
int MaxBlocksPerSm(const format::DeviceInfo& d) {
  int cc = d.compute_major * 10 + d.compute_minor;
  if (cc >= 90) return 32;
  if (cc == 89) return 24;
  if (cc == 86 || cc == 87) return 16;
  if (cc == 80) return 32;
  if (cc == 75) return 16;
  if (cc >= 50) return 32;
  return 16;
}

}  // namespace

double BlocksPerSm(const format::DeviceInfo& d, const KernelShape& k) {
  if (d.num_sms <= 0) return 0;
  return static_cast<double>(static_cast<float>(Blocks(k)) / static_cast<float>(d.num_sms));
}

double WarpsPerSm(const format::DeviceInfo& d, const KernelShape& k) {
  if (d.num_sms <= 0) return 0;
  int warp = d.warp_size > 0 ? d.warp_size : 32;
  float warps_per_block = static_cast<float>(CeilDiv(std::max<int64_t>(Threads(k), 1), warp));
  return static_cast<double>(static_cast<float>(Blocks(k)) * warps_per_block / static_cast<float>(d.num_sms));
}

int MaxActiveBlocksPerSm(const format::DeviceInfo& d, const KernelShape& k) {
  int64_t threads = Threads(k);
  if (threads <= 0 || d.max_threads_per_multiprocessor <= 0) return 0;
  int64_t warp = d.warp_size > 0 ? d.warp_size : 32;
  int64_t warps_per_block = CeilDiv(threads, warp);
  // Warps.
  int64_t limit = std::min<int64_t>(MaxBlocksPerSm(d), d.max_threads_per_multiprocessor / warp / warps_per_block);
  // Registers: allocated per warp in units of 256, warps in groups of 4.
  if (k.registers_per_thread > 0 && d.regs_per_multiprocessor > 0) {
    int64_t regs_per_warp = RoundUp(k.registers_per_thread * warp, 256);
    int64_t warps_by_regs = (d.regs_per_multiprocessor / regs_per_warp) / 4 * 4;
    limit = std::min(limit, warps_by_regs / warps_per_block);
  }
  // Shared memory: 1 KiB reserved per block by the system (sm_80 and
  // later), in 128-byte units.
  int64_t smem = k.static_shared_memory + k.dynamic_shared_memory;
  if (d.shared_mem_per_multiprocessor > 0) {
    int64_t reserved = d.compute_major >= 8 ? 1024 : 0;
    int64_t per_block = RoundUp(smem + reserved, 128);
    if (per_block > 0) limit = std::min<int64_t>(limit, d.shared_mem_per_multiprocessor / per_block);
  }
  return static_cast<int>(std::max<int64_t>(limit, 0));
}

int EstimatedOccupancyPercent(const format::DeviceInfo& d, const KernelShape& k) {
  if (d.max_threads_per_multiprocessor <= 0 || d.num_sms <= 0) return static_cast<int>(0.5 - 100.0);
  float blocks_per_sm = static_cast<float>(BlocksPerSm(d, k));
  float active = static_cast<float>(MaxActiveBlocksPerSm(d, k));
  if (active < blocks_per_sm) blocks_per_sm = active;
  float occupancy = blocks_per_sm * static_cast<float>(Threads(k)) /
                    static_cast<float>(d.max_threads_per_multiprocessor);
  return static_cast<int>(0.5 + occupancy * 100.0);
}

}  // namespace gpucap::builder
