#include "record_walk.h"

#include <cstring>
#include <vector>

#include "gpucap/format/activity_kind.h"

namespace gpucap::tools {

using format::ActivityKind;
using format::Field;

size_t WalkRecords(const builder::Decoder& decoder, std::span<const uint8_t> raw, const format::ChunkInfo& info,
                   const std::function<void(const RawRecord&)>& visit) {
  struct Shape {
    uint32_t kind;
    builder::Decoder::RecordShape shape;
  };
  std::vector<Shape> shapes;  // a chunk holds a handful of kinds
  size_t off = 0;
  uint32_t index = 0;
  while (off + 8 <= raw.size()) {
    uint32_t kind;
    std::memcpy(&kind, raw.data() + off, 4);
    const builder::Decoder::RecordShape* shape = nullptr;
    for (const Shape& s : shapes) {
      if (s.kind == kind) shape = &s.shape;
    }
    if (shape == nullptr) {
      shapes.push_back({kind, decoder.ShapeOf(kind, info)});
      shape = &shapes.back().shape;
    }
    if (shape->stride < 8 || off + shape->stride > raw.size()) return raw.size() - off;
    visit(RawRecord{index++, kind, shape->stride, raw.data() + off, shape->layout});
    off += shape->stride;
  }
  return 0;
}

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

}  // namespace gpucap::tools
