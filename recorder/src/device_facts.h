// What the trace shows about a GPU: the properties Kineto writes in
// deviceProperties, plus uuid and PCI address. Read through the driver API
// from the control thread, never inside a CUPTI callback.
#ifndef GPUCAP_RECORDER_DEVICE_FACTS_H_
#define GPUCAP_RECORDER_DEVICE_FACTS_H_

#include <cstdint>
#include <optional>

#include "gpucap/format/model.h"

namespace gpucap::recorder {

std::optional<format::DeviceInfo> ReadDevice(uint32_t ordinal);
int32_t DriverVersion();
// The CUDA runtime the application loaded, if any (0 otherwise).
int32_t RuntimeVersion();

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_DEVICE_FACTS_H_
