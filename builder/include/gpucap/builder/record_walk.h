// The one walk over the raw CUPTI records of a decompressed activity chunk:
// each record's kind, its stride (the recorder's per-kind sizes for the
// chunk, then the layout's size, then the session's) and the layout its
// fields are read with. The decoder reads its rows through it; tools that
// look at records one by one and copy some of them (trim) walk with it too,
// so both see the same records in the same order. Below the decoder: it
// knows records' shapes (record_shapes.h), not the decoder that uses it.
#ifndef GPUCAP_BUILDER_RECORD_WALK_H_
#define GPUCAP_BUILDER_RECORD_WALK_H_

#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "gpucap/builder/record_shapes.h"
#include "gpucap/format/cupti_layout.h"

namespace gpucap::builder {

struct RawRecord {
  uint32_t index = 0;   // position in the walk, from 0
  uint32_t kind = 0;
  uint32_t stride = 0;  // bytes to the next record
  const uint8_t* bytes = nullptr;
  const format::RecordLayout* layout = nullptr;  // null: no known layout; the decoder skips it

  uint64_t U(format::Field f) const { return layout ? format::ReadUnsigned(bytes, layout->at(f)) : 0; }
  uint32_t U32(format::Field f) const { return static_cast<uint32_t>(U(f)); }
};

class RecordWalk {
 public:
  RecordWalk(const RecordShapes& shapes, const format::ChunkInfo& info) : shapes_(shapes), info_(info) {}

  // Where a walk stopped early: at a record whose size nothing tells (or
  // that runs past the buffer), with the bytes from there on left unread.
  struct Stop {
    size_t unwalkable_bytes = 0;
    uint32_t kind = 0;  // of the record it stopped at
  };

  // Visits every record that can be walked, in order.
  template <class Visit>
  Stop Run(std::span<const uint8_t> raw, Visit&& visit) {
    size_t off = 0;
    uint32_t index = 0;
    while (off + 8 <= raw.size()) {
      uint32_t kind;
      std::memcpy(&kind, raw.data() + off, 4);
      const RecordShapes::Shape& shape = ShapeOf(kind);
      if (shape.stride < 8 || off + shape.stride > raw.size()) return Stop{raw.size() - off, kind};
      visit(RawRecord{index++, kind, shape.stride, raw.data() + off, shape.layout});
      off += shape.stride;
    }
    return Stop{};
  }

  // The stride and layout records of `kind` have in this chunk.
  const RecordShapes::Shape& ShapeOf(uint32_t kind) {
    for (const auto& [k, shape] : seen_) {
      if (k == kind) return shape;
    }
    seen_.emplace_back(kind, shapes_.ShapeOf(kind, info_));  // a chunk holds a handful of kinds
    return seen_.back().second;
  }

 private:
  const RecordShapes& shapes_;
  const format::ChunkInfo& info_;
  std::vector<std::pair<uint32_t, RecordShapes::Shape>> seen_;  // the kinds met so far
};

// The timestamps the recorder counts toward a chunk's span (start, end), as
// the recorder's buffer walk does; {0, 0} for kinds that have none.
std::pair<uint64_t, uint64_t> SpanOf(const RawRecord& r);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_RECORD_WALK_H_
