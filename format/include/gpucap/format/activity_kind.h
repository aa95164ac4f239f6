// CUPTI activity kind numbers, as CUPTI's public ABI fixes them, so code that
// must not include CUPTI headers (the builder, the tools) can name them.
#ifndef GPUCAP_FORMAT_ACTIVITY_KIND_H_
#define GPUCAP_FORMAT_ACTIVITY_KIND_H_

#include <cstdint>
#include <string>

namespace gpucap::format {

enum class ActivityKind : uint32_t {
  kMemcpy = 1,
  kMemset = 2,
  kKernel = 3,
  kDriver = 4,
  kRuntime = 5,
  kDevice = 8,
  kContext = 9,
  kConcurrentKernel = 10,
  kName = 11,
  kMarker = 12,
  kMarkerData = 13,
  kOverhead = 17,
  kEnvironment = 20,
  kMemcpy2 = 22,
  kFunction = 26,
  kModule = 27,
  kCudaEvent = 36,
  kStream = 37,
  kSynchronization = 38,
  kExternalCorrelation = 39,
  kMemory2 = 49,
  kMemoryPool = 50,
  kGraphTrace = 51,
  kJit = 52,
};

// CUpti_ActivityEnvironmentKind: which reading an ENVIRONMENT record holds.
enum class EnvironmentKind : uint32_t {
  kSpeed = 1,        // SM and memory clocks
  kTemperature = 2,
  kPower = 3,
  kCooling = 4,      // fan speed
};

// "CONCURRENT_KERNEL", ..., or "kind N" for numbers this build does not name.
std::string ActivityKindName(uint32_t kind);

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_ACTIVITY_KIND_H_
