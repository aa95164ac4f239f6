// Walks the raw CUPTI records of a decompressed activity chunk the way the
// builder's decoder does (same strides, same layouts), for tools that look
// at records one by one and copy some of them, as trim does.
#ifndef GPUCAP_TOOLS_RECORD_WALK_H_
#define GPUCAP_TOOLS_RECORD_WALK_H_

#include <cstdint>
#include <functional>
#include <span>

#include "gpucap/builder/decode.h"
#include "gpucap/format/cupti_layout.h"

namespace gpucap::tools {

struct RawRecord {
  uint32_t index = 0;   // position in the walk, from 0
  uint32_t kind = 0;
  uint32_t stride = 0;  // bytes to the next record
  const uint8_t* bytes = nullptr;
  const format::RecordLayout* layout = nullptr;  // null: the decoder skips it

  uint64_t U(format::Field f) const { return layout ? format::ReadUnsigned(bytes, layout->at(f)) : 0; }
  uint32_t U32(format::Field f) const { return static_cast<uint32_t>(U(f)); }
};

// Visits every record that can be walked, in order; returns the bytes after
// a record of unknown size, where the walk (like the decoder's) stops.
size_t WalkRecords(const builder::Decoder& decoder, std::span<const uint8_t> raw, const format::ChunkInfo& info,
                   const std::function<void(const RawRecord&)>& visit);

// The timestamps the recorder counts toward a chunk's span (start, end), as
// the recorder's buffer walk does; {0, 0} for kinds that have none.
std::pair<uint64_t, uint64_t> SpanOf(const RawRecord& r);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_RECORD_WALK_H_
