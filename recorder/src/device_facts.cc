#include "device_facts.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstring>

namespace gpucap::recorder {

std::optional<format::DeviceInfo> ReadDevice(uint32_t ordinal) {
  CUdevice dev;
  if (cuDeviceGet(&dev, static_cast<int>(ordinal)) != CUDA_SUCCESS) return std::nullopt;
  format::DeviceInfo d;
  d.id = ordinal;
  char name[256] = {};
  if (cuDeviceGetName(name, sizeof(name) - 1, dev) == CUDA_SUCCESS) d.name = name;
  CUuuid uuid;
  if (cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) std::memcpy(d.uuid.data(), uuid.bytes, 16);
  size_t mem = 0;
  if (cuDeviceTotalMem(&mem, dev) == CUDA_SUCCESS) d.total_global_mem = mem;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    cuDeviceGetAttribute(&v, a, dev);
    return v;
  };
  d.compute_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  d.compute_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  d.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  d.max_threads_per_multiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  d.regs_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  d.regs_per_multiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  d.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  d.shared_mem_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  d.shared_mem_per_multiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  d.shared_mem_per_block_optin = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  d.num_sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d.l2_cache_size = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  d.clock_rate_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  d.memory_clock_rate_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  d.memory_bus_width = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  char pci[64] = {};
  if (cuDeviceGetPCIBusId(pci, sizeof(pci) - 1, dev) == CUDA_SUCCESS) d.pci_bus_id = pci;
  return d;
}

int32_t DriverVersion() {
  int v = 0;
  cuDriverGetVersion(&v);
  return v;
}

int32_t RuntimeVersion() {
  // The application's cudart, if it exported its symbols globally; the
  // recorder never loads one of its own.
  using Fn = int (*)(int*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion"));
  int v = 0;
  if (fn && fn(&v) == 0) return v;
  return 0;
}

}  // namespace gpucap::recorder
