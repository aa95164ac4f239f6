#include "gpucap/builder/record_walk.h"

#include "gpucap/format/activity_kind.h"

namespace gpucap::builder {

using format::ActivityKind;
using format::Field;

std::pair<uint64_t, uint64_t> SpanOf(const RawRecord& r) {
  if (r.layout == nullptr) return {0, 0};
  switch (static_cast<ActivityKind>(r.kind)) {
    case ActivityKind::kKernel:
    case ActivityKind::kConcurrentKernel:
    case ActivityKind::kMemcpy:
    case ActivityKind::kMemcpy2:
    case ActivityKind::kMemset:
    case ActivityKind::kRuntime:
    case ActivityKind::kDriver:
    case ActivityKind::kOverhead:
    case ActivityKind::kSynchronization:
      return {r.U(Field::kStart), r.U(Field::kEnd)};
    case ActivityKind::kCudaEvent:
      return {r.U(Field::kDeviceTimestamp), r.U(Field::kDeviceTimestamp)};
    case ActivityKind::kMarker:
      return {r.U(Field::kTimestamp), r.U(Field::kTimestamp)};
    default:
      return {0, 0};
  }
}

}  // namespace gpucap::builder
